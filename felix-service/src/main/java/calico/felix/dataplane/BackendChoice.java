package calico.felix.dataplane;

import calico.dataplane.iptables.IptablesBackend;
import calico.dataplane.iptables.XtablesLockSettings;
import calico.felix.calc.FelixSettings;
import java.util.function.Supplier;

/**
 * Which policy driver programs the kernel, resolved from the effective FelixConfiguration (a
 * {@code ConfigUpdate}'s settings, in which {@code FELIX_*} variables already won):
 *
 * <ul>
 *   <li>{@code bpfEnabled: true} → {@link Bpf}, whatever the other two say (as in Calico, the
 *       eBPF dataplane replaces the iptables/nftables policy);</li>
 *   <li>{@code nftablesMode: Enabled} → {@link Nftables};</li>
 *   <li>{@code Disabled} → {@link Iptables};</li>
 *   <li>{@code Auto} (the default) → {@link Iptables}. Calico's felix follows kube-proxy's mode
 *       here (nftables when kube-proxy runs in nftables mode); we cannot see kube-proxy, so Auto
 *       keeps the iptables dataplane, which works beside either kube-proxy mode.</li>
 * </ul>
 *
 * For iptables, {@code iptablesBackend} {@code NFT} / {@code Legacy} are taken as given and
 * {@code Auto} (the default) is {@link IptablesBackend#detect}ed in the programmed namespace, as
 * Calico does by counting the rules each backend already holds.
 */
public sealed interface BackendChoice {

    /** The iptables driver on the given iptables backend, taking the xtables lock as configured. */
    record Iptables(IptablesBackend backend, XtablesLockSettings lock) implements BackendChoice {
        public Iptables {
            java.util.Objects.requireNonNull(backend, "backend");
            java.util.Objects.requireNonNull(lock, "lock");
        }

        public Iptables(IptablesBackend backend) {
            this(backend, XtablesLockSettings.defaults());
        }
    }

    /** The nftables driver (table {@code inet calico}). */
    record Nftables() implements BackendChoice {
    }

    /** The eBPF driver: tc programs on the workload interfaces, maps pinned on a bpffs. */
    record Bpf() implements BackendChoice {
    }

    /**
     * The config fields the choice depends on, normalised: {@code bpfEnabled}, the two mode fields and the xtables
     * lock fields ({@code iptablesLockFilePath}, {@code iptablesLockTimeout},
     * {@code iptablesLockProbeInterval}); changes of anything else never restart a driver.
     */
    record Inputs(String nftablesMode, String iptablesBackend, XtablesLockSettings lock, boolean bpfEnabled) {
        public static Inputs of(FelixSettings config) {
            return new Inputs(norm(config.nftablesMode()), norm(config.iptablesBackend()), lockOf(config),
                    config.bpfEnabled());
        }

        /** Without eBPF. */
        public Inputs(String nftablesMode, String iptablesBackend, XtablesLockSettings lock) {
            this(nftablesMode, iptablesBackend, lock, false);
        }

        /** The lock settings; an unusable value (a zero probe interval) falls back to Calico's default for it. */
        private static XtablesLockSettings lockOf(FelixSettings s) {
            java.time.Duration probe = s.iptablesLockProbeInterval();
            return new XtablesLockSettings(java.nio.file.Path.of(s.iptablesLockFilePath()), s.iptablesLockTimeout(),
                    probe.isZero() || probe.isNegative() ? XtablesLockSettings.DEFAULT_PROBE_INTERVAL : probe);
        }

        private static String norm(String v) {
            return v == null || v.isBlank() ? "auto" : v.strip().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /**
     * Resolves the choice.
     *
     * @param detect runs {@link IptablesBackend#detect} in the programmed namespace; called only
     *               for {@code iptablesBackend: Auto} without nftables
     */
    static BackendChoice resolve(Inputs in, Supplier<IptablesBackend> detect) {
        if (in.bpfEnabled()) {
            return new Bpf();
        }
        if (in.nftablesMode().equals("enabled")) {
            return new Nftables();
        }
        // "disabled", "auto", or anything the resolver would have refused: iptables.
        return switch (in.iptablesBackend()) {
            case "nft" -> new Iptables(IptablesBackend.NFT, in.lock());
            case "legacy" -> new Iptables(IptablesBackend.LEGACY, in.lock());
            default -> new Iptables(detect.get(), in.lock());
        };
    }

    /** {@return the short name of the driver this choice makes}, as {@code PolicyDriver.name()} reports it. */
    default String driverName() {
        if (this instanceof Iptables i) {
            return "iptables-" + i.backend().name().toLowerCase(java.util.Locale.ROOT);
        }
        return this instanceof Bpf ? "bpf" : "nftables";
    }
}
