package calico.felix.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.api.model.EncapsulationMode;
import calico.dataplane.testing.NetNs;
import calico.felix.e2e.MultiNodeCluster.ClusterNode;
import calico.libcalico.testing.Await;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Routes between nodes with real packets: nodes are network namespaces on an underlay of bridges
 * (and a router between subnets), each with its own felix over one datastore ({@link MultiNodeCluster});
 * one subclass per datastore.
 * Encapsulation is seen, not assumed: an nftables counter in node A's namespace (a table of the
 * test's own, beside felix's {@code inet calico}) counts the UDP packets to port 4789 it sends.
 */
abstract class MultiNodeRoutes {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final Pattern PACKETS = Pattern.compile("packets (\\d+)");

    private final TestDatastore datastore;

    MultiNodeRoutes(TestDatastore datastore) {
        this.datastore = datastore;
    }

    @BeforeEach
    void preconditions() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        String reason = Backend.NFTABLES.unavailableReason();
        assumeTrue(reason == null, reason);
        datastore.reset();
    }

    /** Counts the VXLAN packets node {@code n} sends from now on. */
    private static void countVxlan(ClusterNode n) {
        n.netns().exec("nft", "add table ip rtcount");
        n.netns().exec("nft", "add chain ip rtcount out { type filter hook output priority 0 ; }");
        n.netns().exec("nft", "add rule ip rtcount out udp dport 4789 counter");
    }

    private static long vxlanSent(ClusterNode n) {
        Matcher m = PACKETS.matcher(n.netns().exec("nft", "list chain ip rtcount out"));
        assertThat(m.find()).as("counter in node %s", n.name()).isTrue();
        return Long.parseLong(m.group(1));
    }

    private static String routes(ClusterNode n) {
        return n.netns().exec("ip", "-4", "route", "show", "proto", "80");
    }

    private static String neighbours(ClusterNode n) {
        return n.netns().tryExec("ip", "-4", "neigh", "show", "dev", "vxlan.calico").output();
    }

    private static String fdb(ClusterNode n) {
        return n.netns().tryExec("bridge", "fdb", "show", "dev", "vxlan.calico").output();
    }

    private static void awaitTcp(Workload from, Workload to) {
        Await.until(from + " -> " + to + " TCP " + MultiNodeCluster.TCP_PORT, WAIT,
                () -> from.netns().tcpConnects(to.ip(), MultiNodeCluster.TCP_PORT, Duration.ofSeconds(1)));
    }

    @Test
    void vxlanCarriesPodTrafficBetweenNodesAndFollowsNodeRemovalAndPoolChange() {
        try (MultiNodeCluster c = new MultiNodeCluster(datastore, Backend.NFTABLES)) {
            c.pool(EncapsulationMode.Always, EncapsulationMode.Never);
            ClusterNode a = c.addNode("rt-node-a", 1, 0);
            ClusterNode b = c.addNode("rt-node-b", 2, 0);
            Workload pa = c.pod(a, "rt-vxlan", "pa");
            Workload pb = c.pod(b, "rt-vxlan", "pb");
            countVxlan(a);
            c.startFelix(a);
            c.startFelix(b);

            awaitTcp(pa, pb);
            awaitTcp(pb, pa);
            assertThat(pa.netns().pings(pb.ip(), Duration.ofSeconds(5))).isTrue();
            assertThat(pb.netns().pings(pa.ip(), Duration.ofSeconds(5))).isTrue();
            // Same subnet, but the pool says Always: every packet to B's pods went encapsulated.
            assertThat(vxlanSent(a)).isPositive();
            assertThat(routes(a)).contains("10.75.2.0/26 via 10.75.2.0 dev vxlan.calico onlink")
                    .contains("blackhole 10.75.1.0/26");
            assertThat(a.netns().exec("ip", "-d", "link", "show", "vxlan.calico")).contains("vxlan id 4096")
                    .contains("local 172.30.0.11").contains("dstport 4789").contains("mtu 1450");
            assertThat(neighbours(a)).containsPattern("10\\.75\\.2\\.0 lladdr 66:[0-9a-f:]{14} PERMANENT");
            assertThat(fdb(a)).containsPattern("66:[0-9a-f:]{14} dst 172\\.30\\.0\\.12 self permanent");
            // Each node's device MAC is the one the other programmed for it (derived from the name on both sides).
            String macOfB = b.netns().exec("cat", "/sys/class/net/vxlan.calico/address").strip();
            assertThat(neighbours(a)).contains("10.75.2.0 lladdr " + macOfB);

            // Node B decommissioned: its route, neighbour and FDB entry disappear on A.
            c.removeNode(b);
            Await.until("B's route, neighbour and FDB entry gone on A", WAIT,
                    () -> !routes(a).contains("10.75.2.0/26") && !neighbours(a).contains("10.75.2.0")
                            && !fdb(a).contains("172.30.0.12"));
            assertThat(pa.netns().tcpConnects(pb.ip(), MultiNodeCluster.TCP_PORT, Duration.ofSeconds(1))).isFalse();

            // The pool switched to Never: the device goes, and with it every VXLAN route; the blackhole stays.
            c.pool(EncapsulationMode.Never, EncapsulationMode.Never);
            Await.until("vxlan.calico gone on A", WAIT,
                    () -> a.netns().tryExec("ip", "link", "show", "vxlan.calico").status() != 0);
            assertThat(routes(a)).doesNotContain("vxlan.calico").contains("blackhole 10.75.1.0/26");
        }
    }

    @Test
    void establishedConnectionsAcrossNodesSurviveAFelixRestart() throws Exception {
        try (MultiNodeCluster c = new MultiNodeCluster(datastore, Backend.NFTABLES)) {
            c.pool(EncapsulationMode.Always, EncapsulationMode.Never);
            ClusterNode a = c.addNode("rt-node-a", 1, 0);
            ClusterNode b = c.addNode("rt-node-b", 2, 0);
            Workload pa = c.pod(a, "rt-restart", "pa");
            Workload pb = c.pod(b, "rt-restart", "pb");
            c.startFelix(a);
            c.startFelix(b);
            awaitTcp(pa, pb);

            // An echo server in pb and one connection from pa, held across the restart.
            java.net.ServerSocket server = pb.netns().call(() -> new java.net.ServerSocket(9090, 1,
                    java.net.InetAddress.getByName(pb.ip())));
            Thread echo = new Thread(() -> {
                try (java.net.Socket s = server.accept()) {
                    s.getInputStream().transferTo(s.getOutputStream());
                } catch (java.io.IOException e) {
                    // the test closes the server
                }
            }, "rt-echo");
            echo.setDaemon(true);
            echo.start();
            try (server; java.net.Socket client = pa.netns().call(() -> new java.net.Socket(pb.ip(), 9090))) {
                client.setSoTimeout(20_000);
                assertThat(roundTrip(client, "before")).isEqualTo("before");
                String device = a.netns().exec("cat", "/sys/class/net/vxlan.calico/ifindex").strip();
                String routesBefore = routes(a);

                c.restartFelix(a);

                // The new felix found its device, entries and routes and kept them: same device, same routes.
                assertThat(a.netns().exec("cat", "/sys/class/net/vxlan.calico/ifindex").strip()).isEqualTo(device);
                assertThat(routes(a)).isEqualTo(routesBefore);
                assertThat(roundTrip(client, "after")).isEqualTo("after");
            }
        }
    }

    private static String roundTrip(java.net.Socket s, String text) throws java.io.IOException {
        byte[] out = (text + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8);
        s.getOutputStream().write(out);
        s.getOutputStream().flush();
        byte[] in = s.getInputStream().readNBytes(out.length);
        return new String(in, java.nio.charset.StandardCharsets.UTF_8).strip();
    }

    @Test
    void crossSubnetEncapsulatesOnlyBetweenSubnets() {
        try (MultiNodeCluster c = new MultiNodeCluster(datastore, Backend.NFTABLES)) {
            c.pool(EncapsulationMode.CrossSubnet, EncapsulationMode.Never);
            ClusterNode a = c.addNode("rt-node-a", 1, 0);
            ClusterNode b = c.addNode("rt-node-b", 2, 0);
            ClusterNode far = c.addNode("rt-node-c", 3, 1);
            Workload pa = c.pod(a, "rt-cross", "pa");
            Workload pb = c.pod(b, "rt-cross", "pb");
            Workload pc = c.pod(far, "rt-cross", "pc");
            countVxlan(a);
            c.startFelix(a);
            c.startFelix(b);
            c.startFelix(far);

            // Same subnet: a plain route via B's address, and not one VXLAN packet.
            awaitTcp(pa, pb);
            assertThat(pa.netns().pings(pb.ip(), Duration.ofSeconds(5))).isTrue();
            assertThat(routes(a)).contains("10.75.2.0/26 via 172.30.0.12 dev eth0");
            assertThat(vxlanSent(a)).isZero();

            // Another subnet (through the router): VXLAN.
            awaitTcp(pa, pc);
            awaitTcp(pc, pa);
            assertThat(pa.netns().pings(pc.ip(), Duration.ofSeconds(5))).isTrue();
            assertThat(routes(a)).contains("10.75.3.0/26 via 10.75.3.0 dev vxlan.calico onlink");
            assertThat(vxlanSent(a)).isPositive();
            assertThat(routes(far)).contains("10.75.1.0/26 via 10.75.1.0 dev vxlan.calico onlink")
                    .contains("10.75.2.0/26 via 10.75.2.0 dev vxlan.calico onlink");
        }
    }
}
