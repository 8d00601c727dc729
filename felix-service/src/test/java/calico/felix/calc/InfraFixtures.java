package calico.felix.calc;

import calico.api.codec.ResourceCodec;
import calico.api.model.EncapsulationMode;
import calico.api.model.FelixConfiguration;
import calico.api.model.FelixConfigurationSpec;
import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.Node;
import calico.api.model.NodeSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.model.WorkloadEndpoint;
import calico.api.model.WorkloadEndpointSpec;
import calico.libcalico.syncer.Update;
import calico.libcalico.syncer.UpdateType;
import java.util.List;
import java.util.Map;

/** Real calico-api resources and syncer updates for the infrastructure stage tests. */
final class InfraFixtures {

    private InfraFixtures() {
    }

    static Update set(Resource r) {
        return Update.of(UpdateType.UPDATED, r, 1);
    }

    static Update deleted(ResourceKind kind, String name) {
        return Update.deleted(ResourceKey.of(kind, name), 1);
    }

    static Update deleted(ResourceKind kind, String namespace, String name) {
        return Update.deleted(ResourceKey.of(kind, namespace, name), 1);
    }

    /** A FelixConfiguration whose spec is read by the real codec's mapper from field → value. */
    static FelixConfiguration felixConfig(String name, Map<String, ?> spec) {
        FelixConfigurationSpec s = ResourceCodec.get().jsonMapper().convertValue(spec, FelixConfigurationSpec.class);
        return new FelixConfiguration(ObjectMeta.named(name), s);
    }

    static Node node(String name, String ipv4, String ipv6) {
        return node(name, ipv4, ipv6, Map.of());
    }

    static Node node(String name, String ipv4, String ipv6, Map<String, String> labels) {
        NodeSpec.BGP bgp = ipv4 == null && ipv6 == null ? null : new NodeSpec.BGP(null, ipv4, ipv6, null, null);
        return new Node(ObjectMeta.named(name).withLabels(labels), NodeSpec.ofBgp(bgp));
    }

    /** A Node with a BGP address and VXLAN tunnel settings (mac null: none written, as calico-node leaves it). */
    static Node vxlanNode(String name, String ipv4, String tunnel4, String mac, String ipv6, String tunnel6) {
        NodeSpec.BGP bgp = new NodeSpec.BGP(null, ipv4, ipv6, null, null);
        return new Node(ObjectMeta.named(name), new NodeSpec(bgp, tunnel4, mac, tunnel6, null, null, null, null, null));
    }

    /** An IPAM block {@code cidr} affine to {@code node} (null: no affinity). */
    static calico.api.model.IPAMBlock block(String cidr, String node) {
        return new calico.api.model.IPAMBlock(ObjectMeta.named(calico.api.model.IpamNames.blockName(calico.api.net.Cidr.parse(cidr))),
                new calico.api.model.IPAMBlockSpec(cidr, node == null ? null : "host:" + node, null, null, null, null, null,
                        null, null, null));
    }

    static IPPool pool(String name, String cidr, boolean nat) {
        return pool(name, cidr, nat, null, null, null);
    }

    static IPPool pool(String name, String cidr, Boolean nat, EncapsulationMode ipip, EncapsulationMode vxlan,
                       Boolean disabled) {
        return new IPPool(ObjectMeta.named(name),
                new IPPoolSpec(cidr, vxlan, ipip, nat, disabled, null, null, null, null, null, null));
    }

    static WorkloadEndpoint wep(String namespace, String name, String node, String iface, String... ips) {
        return new WorkloadEndpoint(ObjectMeta.namespaced(namespace, name),
                new WorkloadEndpointSpec("k8s", null, node, null, name, "eth0", null, List.of(ips), null, null, null,
                        null, iface, null, null, null));
    }
}
