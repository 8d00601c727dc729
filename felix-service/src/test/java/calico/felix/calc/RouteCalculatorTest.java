package calico.felix.calc;

import static calico.felix.calc.InfraFixtures.block;
import static calico.felix.calc.InfraFixtures.deleted;
import static calico.felix.calc.InfraFixtures.node;
import static calico.felix.calc.InfraFixtures.pool;
import static calico.felix.calc.InfraFixtures.set;
import static calico.felix.calc.InfraFixtures.wep;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import calico.felix.calc.DataplaneUpdate.RouteRemove;
import calico.felix.calc.DataplaneUpdate.RouteType;
import calico.felix.calc.DataplaneUpdate.RouteUpdate;
import calico.felix.testing.LogCapture;
import calico.libcalico.syncer.Update;
import java.util.List;
import org.junit.jupiter.api.Test;

class RouteCalculatorTest {

    private static final String HOST = "node-a";

    private final Dispatcher dispatcher = new Dispatcher();
    private final InfraRecorder out = new InfraRecorder();

    RouteCalculatorTest() {
        new RouteCalculator(HOST, out).registerWith(dispatcher);
    }

    private void send(Update... updates) {
        dispatcher.onUpdates(List.of(updates));
    }

    private static RouteUpdate local(String dst, String iface, String nodeIp, String pool, boolean nat) {
        return new RouteUpdate(dst, RouteType.LOCAL_WORKLOAD, HOST, nodeIp, iface, pool, nat);
    }

    private static RouteUpdate remote(String dst, String node, String nodeIp, String pool, boolean nat) {
        return new RouteUpdate(dst, RouteType.REMOTE_WORKLOAD, node, nodeIp, null, pool, nat);
    }

    @Test
    void affineBlocksAreRoutedToTheirNodeAndFollowNodePoolAndAffinityChanges() {
        send(set(node(HOST, "192.168.0.1/24", null)), set(node("node-b", "192.168.0.2/24", null)),
                set(pool("p", "10.244.0.0/16", true)));
        out.drain();

        send(set(block("10.244.0.0/26", HOST)), set(block("10.244.1.0/26", "node-b")), set(block("10.244.2.0/26", null)),
                set(block("10.244.3.0/26", "node-c")));
        assertThat(out.drain()).containsExactlyInAnyOrder(
                new RouteUpdate("10.244.0.0/26", RouteType.LOCAL_BLOCK, HOST, "192.168.0.1", null, "p", true),
                new RouteUpdate("10.244.1.0/26", RouteType.REMOTE_BLOCK, "node-b", "192.168.0.2", null, "p", true),
                // node-c is not known yet: routed once its address comes; a block with no affinity is not routed
                new RouteUpdate("10.244.3.0/26", RouteType.REMOTE_BLOCK, "node-c", null, null, "p", true));

        send(set(node("node-c", "192.168.1.3/24", null)));
        assertThat(out.drain()).contains(
                new RouteUpdate("10.244.3.0/26", RouteType.REMOTE_BLOCK, "node-c", "192.168.1.3", null, "p", true));

        // A workload inside a remote block keeps its own /32 beside the block route.
        send(set(wep("ns", "b1", "node-b", "caliX", "10.244.1.5")));
        assertThat(out.drain()).containsExactly(remote("10.244.1.5/32", "node-b", "192.168.0.2", "p", true));

        // The pool's natOutgoing reaches the block routes.
        send(set(pool("p", "10.244.0.0/16", false)));
        assertThat(out.routes().get("10.244.1.0/26"))
                .isEqualTo(new RouteUpdate("10.244.1.0/26", RouteType.REMOTE_BLOCK, "node-b", "192.168.0.2", null, "p", false));
        out.drain();

        // The block moves to this node (affinity released and claimed again), then is deleted.
        send(set(block("10.244.1.0/26", HOST)));
        assertThat(out.drain()).containsExactly(
                new RouteUpdate("10.244.1.0/26", RouteType.LOCAL_BLOCK, HOST, "192.168.0.1", null, "p", false));
        send(deleted(ResourceKind.IPAM_BLOCK, calico.api.model.IpamNames.blockName(Cidr.parse("10.244.1.0/26"))));
        assertThat(out.drain()).containsExactly(new RouteRemove("10.244.1.0/26"));

        // A block marked deleted is gone too; node-b's address change moves none of node-c's routes.
        var deletedBlock = block("10.244.3.0/26", "node-c");
        send(set(new calico.api.model.IPAMBlock(deletedBlock.metadata(), new calico.api.model.IPAMBlockSpec(
                "10.244.3.0/26", "host:node-c", null, null, null, null, null, null, true, null))));
        assertThat(out.drain()).containsExactly(new RouteRemove("10.244.3.0/26"));
        send(set(node("node-b", "192.168.0.9/24", null)));
        assertThat(out.drain()).doesNotContain(new RouteRemove("10.244.0.0/26"))
                .contains(remote("10.244.1.5/32", "node-b", "192.168.0.9", "p", false));
    }

    @Test
    void localAndRemoteWorkloadsAndHostRoutes() {
        send(set(node(HOST, "192.168.0.1/24", "fd00:1::1/64")), set(node("node-b", "192.168.0.2/24", null)),
                set(wep("ns", "a1", HOST, "cali1", "10.0.0.1/32", "fd00:10::1/128")),
                set(wep("ns", "b1", "node-b", "caliX", "10.0.1.1")));

        assertThat(out.routes().values()).containsExactlyInAnyOrder(
                new RouteUpdate("192.168.0.1/32", RouteType.LOCAL_HOST, HOST, "192.168.0.1", null, null, false),
                new RouteUpdate("fd00:1::1/128", RouteType.LOCAL_HOST, HOST, "fd00:1::1", null, null, false),
                new RouteUpdate("192.168.0.2/32", RouteType.REMOTE_HOST, "node-b", "192.168.0.2", null, null, false),
                local("10.0.0.1/32", "cali1", "192.168.0.1", null, false),
                local("fd00:10::1/128", "cali1", "fd00:1::1", null, false),
                remote("10.0.1.1/32", "node-b", "192.168.0.2", null, false));
    }

    @Test
    void nodeIpArrivingOrChangingUpdatesEveryRemoteRouteOfThatNodeOnly() {
        send(set(wep("ns", "b1", "node-b", null, "10.0.1.1/32")), set(wep("ns", "b2", "node-b", null, "10.0.1.2/32")),
                set(wep("ns", "c1", "node-c", null, "10.0.2.1/32")));
        assertThat(out.routes().get("10.0.1.1/32")).isEqualTo(remote("10.0.1.1/32", "node-b", null, null, false));
        out.drain();

        send(set(node("node-b", "192.168.0.2/24", null)));
        assertThat(out.drain()).containsExactlyInAnyOrder(
                new RouteUpdate("192.168.0.2/32", RouteType.REMOTE_HOST, "node-b", "192.168.0.2", null, null, false),
                remote("10.0.1.1/32", "node-b", "192.168.0.2", null, false),
                remote("10.0.1.2/32", "node-b", "192.168.0.2", null, false));

        send(set(node("node-b", "192.168.0.9/24", null)));
        assertThat(out.drain()).containsExactlyInAnyOrder(
                new RouteRemove("192.168.0.2/32"),
                new RouteUpdate("192.168.0.9/32", RouteType.REMOTE_HOST, "node-b", "192.168.0.9", null, null, false),
                remote("10.0.1.1/32", "node-b", "192.168.0.9", null, false),
                remote("10.0.1.2/32", "node-b", "192.168.0.9", null, false));

        send(set(node("node-b", "192.168.0.9/16", null))); // same address, other subnet: nothing to route differently
        assertThat(out.drain()).isEmpty();

        send(deleted(ResourceKind.NODE, "node-b"));
        assertThat(out.drain()).containsExactlyInAnyOrder(
                new RouteRemove("192.168.0.9/32"),
                remote("10.0.1.1/32", "node-b", null, null, false),
                remote("10.0.1.2/32", "node-b", null, null, false));
    }

    @Test
    void endpointMovingBetweenNodesAndChangingAddresses() {
        send(set(node(HOST, "192.168.0.1", null)), set(node("node-b", "192.168.0.2", null)),
                set(wep("ns", "w", "node-b", "caliW", "10.0.0.5/32")));
        out.drain();

        send(set(wep("ns", "w", HOST, "caliW", "10.0.0.5/32")));
        assertThat(out.drain()).containsExactly(local("10.0.0.5/32", "caliW", "192.168.0.1", null, false));

        send(set(wep("ns", "w", HOST, "caliV", "10.0.0.5/32")));
        assertThat(out.drain()).containsExactly(local("10.0.0.5/32", "caliV", "192.168.0.1", null, false));

        send(set(wep("ns", "w", HOST, "caliV", "10.0.0.6/32")));
        assertThat(out.drain()).containsExactlyInAnyOrder(new RouteRemove("10.0.0.5/32"),
                local("10.0.0.6/32", "caliV", "192.168.0.1", null, false));

        send(set(wep("ns", "w", HOST, "caliV", "10.0.0.6")));
        assertThat(out.drain()).as("bare IP is the same /32").isEmpty();

        send(deleted(ResourceKind.WORKLOAD_ENDPOINT, "ns", "w"));
        assertThat(out.drain()).containsExactly(new RouteRemove("10.0.0.6/32"));
        send(deleted(ResourceKind.WORKLOAD_ENDPOINT, "ns", "w"));
        assertThat(out.drain()).isEmpty();
    }

    @Test
    void poolsAnnotateByLongestPrefixAndReannotateOnlyWhatTheyContain() {
        send(set(wep("ns", "a", "node-b", null, "10.0.0.1/32")), set(wep("ns", "b", "node-b", null, "10.1.0.1/32")),
                set(wep("ns", "c", "node-b", null, "172.16.0.1/32")));
        out.drain();

        send(set(pool("wide", "10.0.0.0/8", false)));
        assertThat(out.drain()).containsExactlyInAnyOrder(remote("10.0.0.1/32", "node-b", null, "wide", false),
                remote("10.1.0.1/32", "node-b", null, "wide", false));

        send(set(pool("narrow", "10.0.0.0/16", true)));
        assertThat(out.drain()).containsExactly(remote("10.0.0.1/32", "node-b", null, "narrow", true));

        send(set(pool("wide", "10.0.0.0/8", true)));
        assertThat(out.drain()).containsExactly(remote("10.1.0.1/32", "node-b", null, "wide", true));

        send(deleted(ResourceKind.IP_POOL, "narrow"));
        assertThat(out.drain()).containsExactly(remote("10.0.0.1/32", "node-b", null, "wide", true));

        send(set(pool("wide", "10.1.0.0/16", true))); // the pool moves (a real datastore refuses this; be safe)
        assertThat(out.drain()).containsExactly(remote("10.0.0.1/32", "node-b", null, null, false));

        send(deleted(ResourceKind.IP_POOL, "wide"), deleted(ResourceKind.IP_POOL, "never-seen"));
        assertThat(out.drain()).containsExactly(remote("10.1.0.1/32", "node-b", null, null, false));
    }

    @Test
    void endpointArrivingInsideAnExistingPoolIsAnnotatedAtOnce() {
        send(set(pool("v6", "fd00:10::/64", true)), set(pool("v4", "10.0.0.0/16", false)));
        send(set(wep("ns", "a", HOST, "cali1", "fd00:10::5/128", "10.0.3.3/32")));

        assertThat(out.routes()).containsEntry("fd00:10::5/128", local("fd00:10::5/128", "cali1", null, "v6", true))
                .containsEntry("10.0.3.3/32", local("10.0.3.3/32", "cali1", null, "v4", false));
    }

    @Test
    void duplicateIpGoesToTheSmallestKeyAndFollowsWhenItGoes() {
        send(set(node("node-b", "192.168.0.2", null)), set(node("node-c", "192.168.0.3", null)));
        send(set(wep("ns", "zz", "node-c", null, "10.0.0.1/32")));
        assertThat(out.routes().get("10.0.0.1/32")).isEqualTo(remote("10.0.0.1/32", "node-c", "192.168.0.3", null, false));

        send(set(wep("ns", "aa", "node-b", null, "10.0.0.1/32")));
        assertThat(out.routes().get("10.0.0.1/32")).isEqualTo(remote("10.0.0.1/32", "node-b", "192.168.0.2", null, false));

        send(set(wep("ns", "mm", HOST, "caliM", "10.0.0.1/32")));
        assertThat(out.routes().get("10.0.0.1/32")).as("aa still sorts first")
                .isEqualTo(remote("10.0.0.1/32", "node-b", "192.168.0.2", null, false));
        out.drain();

        send(deleted(ResourceKind.WORKLOAD_ENDPOINT, "ns", "aa"));
        assertThat(out.drain()).containsExactly(local("10.0.0.1/32", "caliM", null, null, false));

        send(deleted(ResourceKind.WORKLOAD_ENDPOINT, "ns", "zz"));
        assertThat(out.drain()).as("a loser leaving changes nothing").isEmpty();

        send(deleted(ResourceKind.WORKLOAD_ENDPOINT, "ns", "mm"));
        assertThat(out.drain()).containsExactly(new RouteRemove("10.0.0.1/32"));
    }

    @Test
    void aConflictIsLoggedOnceNotOnEveryUpdateOfItsClaimants() {
        try (LogCapture logs = new LogCapture(RouteCalculator.class)) {
            send(set(wep("ns", "aa", "node-b", null, "10.0.0.1/32")), set(wep("ns", "bb", "node-c", null, "10.0.0.1/32")));
            for (int i = 0; i < 3; i++) {
                send(set(wep("ns", "bb", "node-c", null, "10.0.0.1/32", "10.0.0.7/32")),
                        set(wep("ns", "aa", "node-b", null, "10.0.0.1/32")));
            }

            assertThat(logs.containing("10.0.0.1/32 is claimed by")).hasSize(1);
        }
    }

    @Test
    void aHostAddressBeatsAWorkloadClaimingIt() {
        send(set(wep("ns", "w", HOST, "cali1", "192.168.0.2/32")));
        send(set(node("node-b", "192.168.0.2", null)));
        assertThat(out.routes().get("192.168.0.2/32")).isEqualTo(
                new RouteUpdate("192.168.0.2/32", RouteType.REMOTE_HOST, "node-b", "192.168.0.2", null, null, false));

        send(deleted(ResourceKind.NODE, "node-b"));
        assertThat(out.routes().get("192.168.0.2/32")).isEqualTo(local("192.168.0.2/32", "cali1", null, null, false));
    }

    @Test
    void endpointsWithoutNodeOrWithBadNetsRouteNothingForWhatIsBad() {
        send(set(wep("ns", "nonode", null, null, "10.0.0.1/32")),
                set(wep("ns", "bad", "node-b", null, "10.0.0.300/32", "10.0.0.2/32")));

        assertThat(out.routes()).containsOnlyKeys("10.0.0.2/32");
    }

    @Test
    void lastAddressOfANetwork() {
        assertThat(RouteCalculator.lastAddress(Cidr.parse("10.1.0.0/16"))).hasToString("10.1.255.255");
        assertThat(RouteCalculator.lastAddress(Cidr.parse("0.0.0.0/0"))).hasToString("255.255.255.255");
        assertThat(RouteCalculator.lastAddress(Cidr.parse("10.0.0.1/32"))).hasToString("10.0.0.1");
        assertThat(RouteCalculator.lastAddress(Cidr.parse("fd00::/64"))).hasToString("fd00::ffff:ffff:ffff:ffff");
        assertThat(RouteCalculator.lastAddress(Cidr.parse("fd00::/48"))).hasToString("fd00::ffff:ffff:ffff:ffff:ffff");
        assertThat(RouteCalculator.lastAddress(Cidr.parse("::/0"))).hasToString("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
    }
}
