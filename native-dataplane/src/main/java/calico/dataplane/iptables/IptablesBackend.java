package calico.dataplane.iptables;

import java.util.ArrayList;
import java.util.List;

/**
 * Which iptables implementation programs the kernel: the nf_tables-based {@code iptables-nft-*}
 * tools or the older {@code iptables-legacy-*} (x_tables) ones. Both can be loaded at once and
 * the kernel evaluates both, so felix must write to the one the rest of the host uses.
 */
public enum IptablesBackend {
    NFT("nft"),
    LEGACY("legacy");

    private final String variant;

    IptablesBackend(String variant) {
        this.variant = variant;
    }

    /** {@return e.g. {@code iptables-nft-restore} or {@code ip6tables-legacy-restore}} */
    public String restoreBinary(IpVersion version) {
        return version.toolPrefix() + "-" + variant + "-restore";
    }

    /** {@return e.g. {@code iptables-nft-save} or {@code ip6tables-legacy-save}} */
    public String saveBinary(IpVersion version) {
        return version.toolPrefix() + "-" + variant + "-save";
    }

    /**
     * Mirrors Calico's {@code iptablesBackend: Auto}: use whichever backend already holds more
     * rules (IPv4 and IPv6 {@code -save} output summed), NFT on a tie, which includes a host
     * with no rules at all. Rules ({@code -A} lines) are counted rather than all lines because
     * both tools print chain headers for empty built-in tables, which would skew a raw count.
     * A backend whose save binary is missing or fails counts as holding no rules.
     *
     * @param commandPrefix prepended to each command (empty in production; tests pass
     *                      {@code ip netns exec <ns>})
     */
    public static IptablesBackend detect(List<String> commandPrefix) {
        long legacy = ruleCount(LEGACY, commandPrefix);
        long nft = ruleCount(NFT, commandPrefix);
        return choose(legacy, nft);
    }

    /** The decision of {@link #detect} given the two rule counts. */
    public static IptablesBackend choose(long legacyRules, long nftRules) {
        return legacyRules > nftRules ? LEGACY : NFT;
    }

    private static long ruleCount(IptablesBackend backend, List<String> commandPrefix) {
        long count = 0;
        for (IpVersion v : IpVersion.values()) {
            List<String> cmd = new ArrayList<>(commandPrefix);
            cmd.add(backend.saveBinary(v));
            ProcessRunner.Result r = ProcessRunner.runQuietly(cmd, "", java.util.Map.of());
            if (r.status() == 0) {
                count += r.stdout().lines().filter(l -> l.startsWith("-A ")).count();
            }
        }
        return count;
    }
}
