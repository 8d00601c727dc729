package calico.controllers.node;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.HostEndpoint;
import calico.api.model.Node;
import calico.api.model.NodeSpec;
import calico.api.model.ObjectMeta;
import calico.api.net.Cidr;
import calico.api.selector.Selector;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Which host endpoints a node should have, by Calico's rules (the real-cluster test is KubernetesControllersTest). */
class AutoHostEndpointsTest {

    private static final Node NODE = new Node(ObjectMeta.named("n1").withLabels(Map.of("role", "edge", "k", "node")),
            new NodeSpec(new NodeSpec.BGP(null, "172.16.1.1/24", "fe80::1", "192.168.100.1", null), "10.10.20.1", null,
                    "dead:beef::1", null, List.of(), new NodeSpec.Wireguard("192.168.100.1", null),
                    List.of(new NodeSpec.Address("192.168.200.1", "InternalIP"), new NodeSpec.Address("203.0.113.9", "ExternalIP")),
                    List.of(new NodeSpec.Interface("eth0", List.of("192.168.200.1/24")),
                            new NodeSpec.Interface("eth1", List.of("10.1.0.5/16", "fd00::5/64")),
                            new NodeSpec.Interface("lo", List.of("127.0.0.1/8")))));

    private static HostEndpointTemplate template(String name, List<String> cidrs, String pattern, String selector) {
        return new HostEndpointTemplate(name, cidrs.stream().map(Cidr::parse).toList(), Optional.ofNullable(pattern),
                Map.of("k", "template"), selector == null ? Selector.all() : Selector.parse(selector));
    }

    private static Map<String, HostEndpoint> desired(HostEndpointSettings s) {
        return AutoHostEndpoints.desired(NODE, s).stream().collect(Collectors.toMap(h -> h.metadata().name(),
                Function.identity()));
    }

    @Test
    void theDefaultHostEndpointHoldsEveryAddressOfTheNodeInCalicosOrder() {
        HostEndpoint h = desired(HostEndpointSettings.defaultOnly()).get("n1-auto-hep");
        assertThat(h.spec().interfaceName()).isEqualTo("*");
        assertThat(h.spec().expectedIPs()).containsExactly("172.16.1.1", "fe80::1", "192.168.100.1", "10.10.20.1",
                "dead:beef::1", "192.168.200.1", "10.1.0.5", "fd00::5", "127.0.0.1");
        assertThat(h.metadata().labels()).containsEntry("k", "node").containsEntry("projectcalico.org/created-by",
                "calico-kube-controllers");
    }

    @Test
    void aTemplateHoldsTheAddressesInsideItsCidrsWithoutInterfaceName() {
        Map<String, HostEndpoint> heps = desired(new HostEndpointSettings(true, false,
                List.of(template("int", List.of("192.168.0.0/16"), null, "role == 'edge'"))));
        assertThat(heps).containsOnlyKeys("n1-int-auto-hep");
        HostEndpoint h = heps.get("n1-int-auto-hep");
        assertThat(h.spec().interfaceName()).isEmpty();
        assertThat(h.spec().expectedIPs()).containsExactly("192.168.100.1", "192.168.200.1");
        assertThat(h.spec().profiles()).containsExactly("projectcalico-default-allow");
        assertThat(h.metadata().labels()).as("the template's label wins over the node's").containsEntry("k", "template")
                .containsEntry("role", "edge").containsEntry("projectcalico.org/created-by", "calico-kube-controllers");
    }

    @Test
    void aTemplateSkipsNodesItDoesNotSelectAndNodesWithNoAddressInside() {
        assertThat(desired(new HostEndpointSettings(true, false,
                List.of(template("a", List.of("192.168.0.0/16"), null, "role == 'core'"),
                        template("b", List.of("198.51.100.0/24"), null, null))))).isEmpty();
    }

    @Test
    void anInterfacePatternMakesOneHostEndpointPerMatchingInterface() {
        Map<String, HostEndpoint> heps = desired(new HostEndpointSettings(true, true,
                List.of(template("if", List.of(), "^eth", null), template("v6", List.of("fd00::/8"), "eth1", null))));
        assertThat(heps).containsOnlyKeys("n1-auto-hep", "n1-if-eth0-auto-hep", "n1-if-eth1-auto-hep", "n1-v6-eth1-auto-hep");
        assertThat(heps.get("n1-if-eth1-auto-hep").spec().interfaceName()).isEqualTo("eth1");
        assertThat(heps.get("n1-if-eth1-auto-hep").spec().expectedIPs()).containsExactly("10.1.0.5", "fd00::5");
        assertThat(heps.get("n1-v6-eth1-auto-hep").spec().expectedIPs()).containsExactly("fd00::5");
    }
}
