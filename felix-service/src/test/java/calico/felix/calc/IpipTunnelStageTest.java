package calico.felix.calc;

import static calico.felix.calc.InfraFixtures.deleted;
import static calico.felix.calc.InfraFixtures.set;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.Node;
import calico.api.model.NodeSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.ResourceKind;
import calico.felix.calc.DataplaneUpdate.IpipTunnelAddressRemove;
import calico.felix.calc.DataplaneUpdate.IpipTunnelAddressUpdate;
import calico.libcalico.syncer.Update;
import java.util.List;
import org.junit.jupiter.api.Test;

/** This node's {@code spec.bgp.ipv4IPIPTunnelAddr} into the stream (Calico's per-host {@code IpInIpTunnelAddr}). */
class IpipTunnelStageTest {

    private final Dispatcher dispatcher = new Dispatcher();
    private final InfraRecorder out = new InfraRecorder();

    IpipTunnelStageTest() {
        new IpipTunnelStage("node-a", out).registerWith(dispatcher);
    }

    private void send(Update... updates) {
        dispatcher.onUpdates(List.of(updates));
    }

    private static Node ipipNode(String name, String tunnel) {
        return new Node(ObjectMeta.named(name), new NodeSpec(new NodeSpec.BGP(null, "192.168.0.1/24", null, tunnel, null),
                null, null, null, null, null, null, null, null));
    }

    @Test
    void onlyThisNodesAddressIsSentAndFollowed() {
        send(set(ipipNode("node-b", "10.244.1.0")));
        assertThat(out.drain()).as("another node's IPIP address is never sent").isEmpty();

        send(set(ipipNode("node-a", "10.244.0.1")));
        assertThat(out.drain()).containsExactly(new IpipTunnelAddressUpdate("node-a", "10.244.0.1"));
        send(set(ipipNode("node-a", "10.244.0.1")));
        assertThat(out.drain()).as("unchanged: nothing").isEmpty();

        send(set(ipipNode("node-a", "10.244.0.7")));
        assertThat(out.drain()).containsExactly(new IpipTunnelAddressUpdate("node-a", "10.244.0.7"));

        send(set(ipipNode("node-a", null)));
        assertThat(out.drain()).as("released by start-up").containsExactly(new IpipTunnelAddressRemove("node-a"));
        send(set(ipipNode("node-a", null)), deleted(ResourceKind.NODE, "node-a"));
        assertThat(out.drain()).as("nothing to remove twice").isEmpty();

        send(set(ipipNode("node-a", "10.244.0.1")));
        send(deleted(ResourceKind.NODE, "node-a"));
        assertThat(out.drain()).containsExactly(new IpipTunnelAddressUpdate("node-a", "10.244.0.1"),
                new IpipTunnelAddressRemove("node-a"));
    }

    @Test
    void theGraphsInfrastructureStagesSendIt() {
        Dispatcher graph = new Dispatcher();
        InfraRecorder recorded = new InfraRecorder();
        InfraStages.registerAll(graph, "node-a", java.util.Map.of(), recorded);
        graph.onUpdates(List.of(set(ipipNode("node-a", "10.244.0.1")), set(ipipNode("node-b", "10.244.1.0"))));
        assertThat(recorded.state).containsEntry("ipip-tunnel:node-a",
                new IpipTunnelAddressUpdate("node-a", "10.244.0.1")).doesNotContainKey("ipip-tunnel:node-b");
    }

    @Test
    void anAddressThatIsNotIpv4CountsAsNone() {
        send(set(ipipNode("node-a", "fd00::1")));
        send(set(ipipNode("node-a", "not-an-address")));
        assertThat(out.drain()).isEmpty();
        send(set(ipipNode("node-a", "10.244.0.1/32")));
        assertThat(out.drain()).as("a CIDR is taken bare").containsExactly(
                new IpipTunnelAddressUpdate("node-a", "10.244.0.1"));
    }
}
