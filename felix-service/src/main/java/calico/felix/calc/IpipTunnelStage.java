package calico.felix.calc;

import calico.api.model.Node;
import calico.api.model.NodeSpec;
import calico.api.model.ResourceKind;
import calico.libcalico.syncer.Update;

/**
 * This node's Node resource to {@link DataplaneUpdate.IpipTunnelAddressUpdate}/{@code Remove}:
 * its {@code spec.bgp.ipv4IPIPTunnelAddr} (calico-node's start-up allocates it while an IPIP pool
 * needs it), which felix puts on {@code tunl0}. Calico's syncer turns the field into the per-host
 * config {@code IpInIpTunnelAddr}, and felix reads only its own host's; likewise only this node's
 * is sent here. An address that is not IPv4 counts as none (logged by {@link HostMetadataStage#bareAddress}).
 */
public final class IpipTunnelStage {

    private final String hostname;
    private final InfraListener out;
    /** The address last sent, null for none: no-op suppression and remove-only-after-add. */
    private String sent;

    public IpipTunnelStage(String hostname, InfraListener out) {
        this.hostname = hostname;
        this.out = out;
    }

    public void registerWith(Dispatcher dispatcher) {
        dispatcher.register(ResourceKind.NODE, this::onUpdate);
    }

    private void onUpdate(Update update) {
        if (!update.key().name().equals(hostname)) {
            return;
        }
        String next = null;
        if (update.value() instanceof Node node && node.spec() != null) {
            NodeSpec.BGP bgp = node.spec().bgp();
            next = bgp == null ? null
                    : HostMetadataStage.bareAddress(hostname, "ipv4IPIPTunnelAddr", bgp.ipv4IPIPTunnelAddr(), 4);
        }
        if (next == null) {
            if (sent != null) {
                sent = null;
                out.onInfraUpdate(new DataplaneUpdate.IpipTunnelAddressRemove(hostname));
            }
            return;
        }
        if (!next.equals(sent)) {
            sent = next;
            out.onInfraUpdate(new DataplaneUpdate.IpipTunnelAddressUpdate(hostname, next));
        }
    }
}
