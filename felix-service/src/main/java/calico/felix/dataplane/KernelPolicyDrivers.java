package calico.felix.dataplane;

import calico.dataplane.iptables.IptablesRestore;
import calico.dataplane.iptables.Ipset;
import calico.dataplane.nft.Nftables;
import calico.felix.dataplane.iptables.IptablesDataplane;
import calico.felix.dataplane.nft.NftablesDataplane;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.PolicyDriver;
import java.util.List;

/**
 * The standard {@link PolicyDriverFactory}: {@link IptablesDataplane} for iptables (its tools run
 * under the namespace's command prefix) and {@link NftablesDataplane} for nftables (libnftables
 * in the namespace of the calling thread).
 */
public final class KernelPolicyDrivers implements PolicyDriverFactory {

    private final List<String> commandPrefix;

    /** @param commandPrefix e.g. {@code ip netns exec <name>}, empty for the process's own namespace */
    public KernelPolicyDrivers(List<String> commandPrefix) {
        this.commandPrefix = List.copyOf(commandPrefix);
    }

    @Override
    public PolicyDriver create(BackendChoice choice, DataplaneModel model) {
        if (choice instanceof BackendChoice.Iptables i) {
            return new IptablesDataplane(new IptablesRestore(i.backend(), i.lock(), commandPrefix), new Ipset(commandPrefix),
                    model);
        }
        // We run on the dataplane thread, inside the programmed namespace: libnftables' socket opens there.
        return new NftablesDataplane(Nftables.open(), model);
    }
}
