package calico.felix.calc;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The eBPF driver's settings beyond {@code bpfEnabled}: the conntrack map's size
 * ({@code bpfMapSizeConntrack}) and the idle timeouts of its entries ({@code bpfConntrackTimeouts},
 * Calico's keys: {@code tcpSynSent}, {@code tcpEstablished}, {@code tcpFinsSeen},
 * {@code tcpResetSeen}, {@code udpTimeout}, {@code icmpTimeout}, {@code genericTimeout}; keys in any
 * case, as the variable's {@code TCPSynSent=20s,…} form has them). A key not given, or
 * {@code tcpFinsSeen: Auto}, keeps the program's default; {@code creationGracePeriod} has no
 * counterpart (the programs never create an entry before policy allowed the flow).
 *
 * @param conntrackTimeouts by Calico's key (its spelling in the resource), only those given
 */
public record BpfSettings(int conntrackMapSize, Map<String, Duration> conntrackTimeouts, AttachType attachType) {

    /**
     * {@code bpfAttachType}: how the programs go on an interface. {@code TCX} (Calico's default): a
     * tcx link where the kernel has tcx (6.6 and later), else tc; {@code TC}: tc's clsact always.
     */
    public enum AttachType { TCX, TC }

    /** Calico's keys, in the resource's spelling. */
    public static final List<String> TIMEOUT_KEYS = List.of("creationGracePeriod", "tcpSynSent", "tcpEstablished",
            "tcpFinsSeen", "tcpResetSeen", "udpTimeout", "genericTimeout", "icmpTimeout");

    public BpfSettings {
        if (conntrackMapSize <= 0) {
            throw new IllegalArgumentException("bpfMapSizeConntrack: must be positive, not " + conntrackMapSize);
        }
        conntrackTimeouts = Map.copyOf(conntrackTimeouts);
    }

    /** From the resolved {@code key=duration} list of {@code bpfConntrackTimeouts} (validated already). */
    static BpfSettings of(int conntrackMapSize, List<String> timeouts, String attachType) {
        Map<String, Duration> out = new TreeMap<>();
        for (String kv : timeouts) {
            int eq = kv.indexOf('=');
            String key = kv.substring(0, eq).strip();
            String value = kv.substring(eq + 1).strip();
            String known = TIMEOUT_KEYS.stream().filter(k -> k.toLowerCase(Locale.ROOT)
                    .equals(key.toLowerCase(Locale.ROOT))).findFirst()
                    .orElseThrow(() -> new IllegalArgumentException("bpfConntrackTimeouts: unknown key " + key));
            if (!value.equalsIgnoreCase("auto")) {
                out.put(known, FelixSettings.GoDurations.parse(value));
            }
        }
        AttachType attach = java.util.Arrays.stream(AttachType.values())
                .filter(t -> t.name().equalsIgnoreCase(attachType.strip())).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("bpfAttachType: TCX or TC, not '" + attachType + "'"));
        return new BpfSettings(conntrackMapSize, out, attach);
    }
}
