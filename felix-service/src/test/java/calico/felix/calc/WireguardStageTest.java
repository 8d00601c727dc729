package calico.felix.calc;

import static calico.felix.calc.InfraFixtures.deleted;
import static calico.felix.calc.InfraFixtures.set;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.Node;
import calico.api.model.NodeSpec;
import calico.api.model.NodeStatus;
import calico.api.model.ObjectMeta;
import calico.api.model.ResourceKind;
import calico.felix.calc.DataplaneUpdate.WireguardEndpointRemove;
import calico.felix.calc.DataplaneUpdate.WireguardEndpointUpdate;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Nodes' published keys and WireGuard addresses to WireGuard endpoint updates. */
class WireguardStageTest {

    static final String KEY = "hSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo=";

    static Node node(String name, String key, String wgAddress) {
        NodeSpec spec = new NodeSpec(new NodeSpec.BGP(null, "10.0.0.1/24", null, null, null), null, null, null, null,
                null, wgAddress == null ? null : new NodeSpec.Wireguard(wgAddress, null), null, null);
        return new Node(ObjectMeta.named(name), spec, new NodeStatus(key, null, null));
    }

    private static List<DataplaneUpdate> run(calico.libcalico.syncer.Update... updates) {
        Dispatcher dispatcher = new Dispatcher();
        InfraRecorder out = new InfraRecorder();
        new WireguardStage(out).registerWith(dispatcher);
        for (var u : updates) {
            dispatcher.onUpdates(List.of(u));
        }
        return out.events;
    }

    @Test
    void keyAndAddressAreSentOnceAndRemovedWithTheNode() {
        assertThat(run(set(node("a", KEY, "10.244.0.9")), set(node("a", KEY, "10.244.0.9")),
                deleted(ResourceKind.NODE, "a")))
                .containsExactly(new WireguardEndpointUpdate("a", KEY, "10.244.0.9"), new WireguardEndpointRemove("a"));
    }

    @Test
    void aNodeThatDropsItsKeyAndAddressIsRemoved() {
        assertThat(run(set(node("a", KEY, null)), set(node("a", null, null))))
                .containsExactly(new WireguardEndpointUpdate("a", KEY, null), new WireguardEndpointRemove("a"));
    }

    @Test
    void aMalformedKeyCountsAsNone() {
        assertThat(run(set(node("a", "not-a-key", null)), set(node("b", "c2hvcnQ=", "10.244.1.1"))))
                .containsExactly(new WireguardEndpointUpdate("b", null, "10.244.1.1"));
    }

    @Test
    void nodesWithoutWireguardAreNeverSent() {
        assertThat(run(set(node("a", null, null)), deleted(ResourceKind.NODE, "a"))).isEmpty();
    }

    @Test
    void theIpv6KeyAndAddressAreAnEndpointOfTheirOwn() {
        NodeSpec spec = new NodeSpec(new NodeSpec.BGP(null, "10.0.0.1/24", "fd00::1/64", null, null), null, null, null,
                null, null, new NodeSpec.Wireguard(null, "fd00:244::9"), null, null);
        Node dual = new Node(ObjectMeta.named("a"), spec, new NodeStatus(null, KEY, null));
        Node v4Only = new Node(ObjectMeta.named("a"), new NodeSpec(spec.bgp(), null, null, null, null, null, null, null,
                null), new NodeStatus(KEY, null, null));
        assertThat(run(set(dual), set(dual), set(v4Only), deleted(ResourceKind.NODE, "a")))
                .containsExactly(new DataplaneUpdate.WireguardEndpointV6Update("a", KEY, "fd00:244::9"),
                        new WireguardEndpointUpdate("a", KEY, null),
                        new DataplaneUpdate.WireguardEndpointV6Remove("a"),
                        new WireguardEndpointRemove("a"));
    }
}
