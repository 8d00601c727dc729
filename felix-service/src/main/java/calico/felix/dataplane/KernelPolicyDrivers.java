package calico.felix.dataplane;

import calico.dataplane.calls.ToolCalls;
import calico.dataplane.iptables.IptablesRestore;
import calico.dataplane.iptables.Ipset;
import calico.dataplane.nft.Nftables;
import calico.felix.dataplane.bpf.BpfDataplane;
import calico.felix.dataplane.iptables.IptablesDataplane;
import calico.felix.dataplane.nft.NftablesDataplane;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.PolicyDriver;
import java.nio.file.Path;
import java.util.List;

/**
 * The standard {@link PolicyDriverFactory}: {@link IptablesDataplane} for iptables (its tools run
 * under the namespace's command prefix), {@link NftablesDataplane} for nftables (libnftables
 * in the namespace of the calling thread) and {@link BpfDataplane} for eBPF (tc in that namespace,
 * pins on the bpffs).
 */
public final class KernelPolicyDrivers implements PolicyDriverFactory {

    /** Where the eBPF driver mounts a bpffs if none is there (Calico's place); its pins go in {@code calico/} below. */
    public static final Path BPF_FS = Path.of("/sys/fs/bpf");

    private final List<String> commandPrefix;
    private final Path bpfFs;
    private final ToolCalls calls;
    private final boolean nftNetlink;

    /**
     * @param commandPrefix e.g. {@code ip netns exec <name>}, empty for the process's own namespace; the
     *                      nftables driver uses its netlink encoder, as felix does by default
     */
    public KernelPolicyDrivers(List<String> commandPrefix) {
        this(commandPrefix, BPF_FS);
    }

    /** @param bpfFs the bpffs mount point for the eBPF driver's pins (tests: a private mount) */
    public KernelPolicyDrivers(List<String> commandPrefix, Path bpfFs) {
        this(commandPrefix, bpfFs, ToolCalls.NONE, true);
    }

    /** As above; {@code calls} hears every tool run of the drivers made here (metrics). */
    public KernelPolicyDrivers(List<String> commandPrefix, Path bpfFs, ToolCalls calls) {
        this(commandPrefix, bpfFs, calls, true);
    }

    /**
     * @param calls      hears every tool run of the drivers made here (metrics)
     * @param nftNetlink whether the nftables driver sends what its netlink encoder covers as netlink
     *                   messages of its own ({@code Nftables.open(calls, true)}) rather than through libnftables
     */
    public KernelPolicyDrivers(List<String> commandPrefix, Path bpfFs, ToolCalls calls, boolean nftNetlink) {
        this.commandPrefix = List.copyOf(commandPrefix);
        this.bpfFs = bpfFs;
        this.calls = java.util.Objects.requireNonNull(calls, "calls");
        this.nftNetlink = nftNetlink;
    }

    @Override
    public PolicyDriver create(BackendChoice choice, DataplaneModel model) {
        if (choice instanceof BackendChoice.Iptables i) {
            return new IptablesDataplane(new IptablesRestore(i.backend(), i.lock(), commandPrefix, calls),
                    new Ipset(commandPrefix, calls), model);
        }
        if (choice instanceof BackendChoice.Bpf) {
            // On the dataplane thread too: tc's netlink socket opens in the programmed namespace.
            return new BpfDataplane(model, bpfFs);
        }
        // We run on the dataplane thread, inside the programmed namespace: libnftables' socket opens there.
        return new NftablesDataplane(Nftables.open(calls, nftNetlink), model);
    }
}
