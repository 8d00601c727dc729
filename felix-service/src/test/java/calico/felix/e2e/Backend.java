package calico.felix.e2e;

import calico.dataplane.testing.NetNs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The kernel backends felix can program, as selected through its environment; a backend whose
 * tool is not installed is reported unavailable (the test then skips with that reason).
 */
enum Backend {
    IPTABLES_NFT("iptables-nft-restore", List.of("--FELIX_DATAPLANEDRIVERNAME=iptables", "--FELIX_IPTABLESBACKEND=NFT")),
    IPTABLES_LEGACY("iptables-legacy-restore",
            List.of("--FELIX_DATAPLANEDRIVERNAME=iptables", "--FELIX_IPTABLESBACKEND=Legacy")),
    NFTABLES("nft", List.of("--FELIX_DATAPLANEDRIVERNAME=kernel", "--FELIX_NFTABLESMODE=Enabled")),
    /** The eBPF driver (tc programs of our own; {@code tc} only for the tests' stranger edits and dumps). */
    BPF("tc", List.of("--FELIX_DATAPLANEDRIVERNAME=kernel", "--FELIX_BPFENABLED=true"));

    private final String tool;
    private final List<String> felixArgs;

    Backend(String tool, List<String> felixArgs) {
        this.tool = tool;
        this.felixArgs = felixArgs;
    }

    /** {@return felix's command-line settings selecting this backend}. */
    List<String> felixArgs() {
        return felixArgs;
    }

    /** {@return why this backend cannot run here, or null when it can}. */
    String unavailableReason() {
        if (!Files.isExecutable(Path.of("/usr/sbin/" + tool))) {
            return "/usr/sbin/" + tool + " is not installed";
        }
        return null;
    }

    /** {@return the command that dumps this backend's ruleset (run inside the host namespace)}. */
    List<String> dumpCommand() {
        return switch (this) {
            case IPTABLES_NFT -> List.of("iptables-nft-save", "-t", "filter");
            case IPTABLES_LEGACY -> List.of("iptables-legacy-save", "-t", "filter");
            case NFTABLES -> List.of("nft", "list", "ruleset");
            case BPF -> List.of("sh", "-c", "for d in /sys/class/net/cali*; do n=${d##*/}; echo \"$n:\"; "
                    + "tc filter show dev $n ingress; tc filter show dev $n egress; done");
        };
    }

    /** {@return the dump command and its output in {@code ns}, cut at 20,000 characters} (for a failure's diagnostics). */
    String rulesetDump(NetNs ns) {
        String ruleset = ns.tryExec(dumpCommand().toArray(String[]::new)).output();
        if (this == BPF) {
            ruleset += tcxHooks(ns); // tc does not show tcx links
        }
        return String.join(" ", dumpCommand()) + ":\n"
                + (ruleset.length() > 20_000 ? ruleset.substring(0, 20_000) + "\n..." : ruleset);
    }

    /** {@return each workload interface's state and the programs on its tcx hooks}, as the kernel reports them in {@code ns} */
    private static String tcxHooks(NetNs ns) {
        try {
            return ns.call(() -> {
                StringBuilder out = new StringBuilder("tcx hooks:\n");
                try (calico.dataplane.netlink.Netlink nl = new calico.dataplane.netlink.Netlink()) {
                    for (calico.dataplane.netlink.Link l : nl.links()) {
                        if (!l.name().startsWith("cali")) {
                            continue;
                        }
                        out.append(l.name()).append(" (").append(l.index()).append(l.up() ? ", up" : ", down").append("):");
                        for (calico.dataplane.bpf.TcDirection hook : calico.dataplane.bpf.TcDirection.values()) {
                            out.append(' ').append(hook.name().toLowerCase(java.util.Locale.ROOT)).append(' ')
                                    .append(calico.dataplane.bpf.Tcx.programNames(l.index(), hook));
                        }
                        out.append('\n');
                    }
                }
                return out.toString();
            });
        } catch (RuntimeException e) {
            return "tcx hooks: cannot list: " + e + "\n";
        }
    }
}
