package calico.confd;

import calico.api.model.ASNumber;
import calico.api.model.BGPConfiguration;
import calico.api.model.BGPConfigurationSpec;
import calico.api.model.BGPPeer;
import calico.api.model.BGPPeerSpec;
import calico.api.model.BlockAffinity;
import calico.api.model.BlockAffinitySpec;
import calico.api.model.IPPool;
import calico.api.model.IpamNames;
import calico.api.net.Cidr;
import calico.api.model.IPPoolSpec;
import calico.api.model.Node;
import calico.api.model.NodeSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.WorkloadEndpoint;
import calico.api.model.WorkloadEndpointSpec;
import java.util.List;
import java.util.Map;

/** Builders for the resources confd reads, with only the fields a test cares about. */
public final class Fixtures {

    private Fixtures() {
    }

    public static Node node(String name, String v4, String v6, Long as, String clusterId, Map<String, String> labels) {
        return new Node(ObjectMeta.named(name).withLabels(labels),
                NodeSpec.ofBgp(new NodeSpec.BGP(as == null ? null : ASNumber.of(as), v4, v6, null, clusterId)));
    }

    public static Node node(String name, String v4) {
        return node(name, v4, null, null, null, Map.of());
    }

    public static IPPool pool(String name, String cidr, boolean disabled, boolean disableExport) {
        return new IPPool(ObjectMeta.named(name), new IPPoolSpec(cidr, null, null, null, disabled ? true : null,
                disableExport ? true : null, null, null, null, null, null));
    }

    public static BlockAffinity affinity(String node, String cidr) {
        return new BlockAffinity(ObjectMeta.named(IpamNames.affinityName(node, Cidr.parse(cidr))),
                BlockAffinitySpec.of(BlockAffinitySpec.CONFIRMED, node, cidr));
    }

    public static BGPConfigurationSpec config(Boolean mesh, Long as) {
        return new BGPConfigurationSpec(null, mesh, as == null ? null : ASNumber.of(as), null, null, null, null, null,
                null, null, null, null, null, null, null, null);
    }

    public static BGPConfiguration bgpConfig(String name, BGPConfigurationSpec spec) {
        return new BGPConfiguration(ObjectMeta.named(name), spec);
    }

    /** A peer spec with the common selectors; everything else unset. */
    public static BGPPeerSpec peerSpec(String node, String nodeSelector, String peerIP, Long as, String peerSelector) {
        return new BGPPeerSpec(node, nodeSelector, peerIP, as == null ? null : ASNumber.of(as), null, peerSelector,
                null, null, null, null, null, null, null, null, null, null);
    }

    public static BGPPeer peer(String name, BGPPeerSpec spec) {
        return new BGPPeer(ObjectMeta.named(name), spec);
    }

    /** A pod's workload endpoint on {@code node} with one address (the datastore names it). */
    public static WorkloadEndpoint wep(String namespace, String pod, String node, String ip,
                                       Map<String, String> labels) {
        return new WorkloadEndpoint(ObjectMeta.namespaced(namespace, null).withLabels(labels),
                new WorkloadEndpointSpec("k8s", null, node, null, pod, "eth0", null,
                        List.of(ip + (ip.contains(":") ? "/128" : "/32")), null, null, null, List.of(), "cali" + pod,
                        null, null, null));
    }

    public static <T> List<T> list(T... items) {
        return List.of(items);
    }
}
