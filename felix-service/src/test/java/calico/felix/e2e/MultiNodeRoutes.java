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

    static void awaitTcp(Workload from, Workload to) {
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

    /**
     * A NetworkPolicy in {@code namespace} lets only {@code allowed} (by its {@code app} label) into
     * {@code target}: {@code other}, which reached {@code target} over IPv6 before, is refused, and
     * {@code allowed} still connects.
     */
    static void ipv6PolicyAdmitsOnly(MultiNodeCluster c, String namespace, Workload allowed, Workload other,
                                     Workload target) {
        assertThat(tcp6(c, other, target)).as(other.pod() + " -> " + target.pod() + " over IPv6 before the policy").isTrue();
        c.networkPolicy("""
                apiVersion: networking.k8s.io/v1
                kind: NetworkPolicy
                metadata: {name: %s-from-%s, namespace: %s}
                spec:
                  podSelector: {matchLabels: {app: %s}}
                  policyTypes: [Ingress]
                  ingress:
                  - from:
                    - podSelector: {matchLabels: {app: %s}}
                """.formatted(target.pod(), allowed.pod(), namespace, target.pod(), allowed.pod()));
        Await.until(other.pod() + " -> " + target.pod() + " over IPv6 refused", WAIT, () -> !tcp6(c, other, target));
        assertThat(tcp6(c, allowed, target)).as(allowed.pod() + " -> " + target.pod() + " over IPv6 still allowed").isTrue();
    }

    /** {@return whether {@code from} reaches {@code to}'s IPv6 address on TCP {@link MultiNodeCluster#TCP_PORT} now}. */
    static boolean tcp6(MultiNodeCluster c, Workload from, Workload to) {
        return from.netns().tcpConnects(c.ipv6(to), MultiNodeCluster.TCP_PORT, Duration.ofSeconds(1));
    }

    @Test
    void dualStackPodsTalkOverVxlanV6BetweenNodesAndIpv6PolicyHolds() {
        try (MultiNodeCluster c = new MultiNodeCluster(datastore, Backend.NFTABLES, true)) {
            c.pool(EncapsulationMode.Always, EncapsulationMode.Never);
            ClusterNode a = c.addNode("v6-node-a", 1, 0);
            ClusterNode b = c.addNode("v6-node-b", 2, 0);
            a.netns().exec("nft", "add table ip6 v6count");
            a.netns().exec("nft", "add chain ip6 v6count out { type filter hook output priority 0 ; }");
            a.netns().exec("nft", "add rule ip6 v6count out udp dport 4789 counter");
            c.startFelix(a);
            c.startFelix(b);
            Await.until("pod MTU file on A", WAIT, () -> c.podMtu(a).isPresent());
            assertThat(c.podMtu(a).getAsInt()).as("the smaller of vxlan.calico (1500 - 50) and vxlan-v6.calico (1500 - 70)")
                    .isEqualTo(1430);
            Workload pa = c.pod(a, "v6-dual", "pa");
            Workload pc = c.pod(a, "v6-dual", "pc");
            Workload pb = c.pod(b, "v6-dual", "pb");

            Await.until("pa -> pb over IPv6", WAIT, () -> tcp6(c, pa, pb));
            Await.until("pb -> pa over IPv6", WAIT, () -> tcp6(c, pb, pa));
            awaitTcp(pa, pb);
            NetNs.Result ping = pa.netns().tryExec("ping", "-6", "-c", "1", "-W", "2", c.ipv6(pb));
            assertThat(ping.status()).as("ping -6 pa -> pb: %s", ping.output()).isZero();
            Matcher sent = PACKETS.matcher(a.netns().exec("nft", "list chain ip6 v6count out"));
            assertThat(sent.find() && Long.parseLong(sent.group(1)) > 0).as("IPv6 VXLAN packets left A").isTrue();
            assertThat(a.netns().exec("ip", "-6", "route", "show", "proto", "80"))
                    .containsPattern("fd00:75:0:2::/122 via fd00:75:0:2:: dev vxlan-v6.calico .*onlink")
                    .contains("blackhole fd00:75:0:1::/122");
            assertThat(a.netns().exec("ip", "-d", "link", "show", "vxlan-v6.calico")).contains("vxlan id 4096")
                    .contains("local fd00:30::11").contains("dstport 4789").contains("mtu 1430");
            // B's device MAC (derived from "<name>-v6" on both sides) is what A programmed for B's IPv6 VTEP.
            String macOfB = b.netns().exec("cat", "/sys/class/net/vxlan-v6.calico/address").strip();
            assertThat(macOfB).isNotEqualTo(b.netns().exec("cat", "/sys/class/net/vxlan.calico/address").strip());
            assertThat(a.netns().exec("ip", "-6", "neigh", "show", "dev", "vxlan-v6.calico"))
                    .contains("fd00:75:0:2:: lladdr " + macOfB + " PERMANENT");
            assertThat(a.netns().exec("bridge", "fdb", "show", "dev", "vxlan-v6.calico"))
                    .contains(macOfB + " dst fd00:30::12 self permanent");

            // Policy holds for IPv6 too: pb admits pa only, so pc (same node as pa) is refused on both families.
            ipv6PolicyAdmitsOnly(c, "v6-dual", pa, pc, pb);
            assertThat(pc.netns().tcpConnects(pb.ip(), MultiNodeCluster.TCP_PORT, Duration.ofSeconds(1)))
                    .as("pc -> pb over IPv4 refused as well").isFalse();
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

    /** {@return the result of a ping with DF set and {@code payload} bytes of ICMP data} (+ 28 bytes of headers). */
    private static NetNs.Result pingDf(Workload from, Workload to, int payload) {
        return from.netns().tryExec("ping", "-M", "do", "-c", "1", "-W", "2", "-s", Integer.toString(payload), to.ip());
    }

    @Test
    void fullSizePacketsWithDfCrossNodesOverVxlanAndTheMtusFollowTheHost() {
        try (MultiNodeCluster c = new MultiNodeCluster(datastore, Backend.NFTABLES)) {
            c.pool(EncapsulationMode.Always, EncapsulationMode.Never);
            ClusterNode a = c.addNode("rt-node-a", 1, 0);
            ClusterNode b = c.addNode("rt-node-b", 2, 0);
            // A jumbo underlay: a VXLAN MTU not derived from the host's (a fixed 1450) fails the full-size ping.
            c.underlayMtu(a, 9000);
            c.underlayMtu(b, 9000);
            c.startFelix(a);
            c.startFelix(b);
            Await.until("pod MTU file on A and B", WAIT, () -> c.podMtu(a).isPresent() && c.podMtu(b).isPresent());
            assertThat(c.podMtu(a).getAsInt()).as("host 9000 - VXLAN 50").isEqualTo(8950);
            assertThat(c.podMtu(b).getAsInt()).isEqualTo(8950);
            Workload pa = c.pod(a, "rt-mtu", "pa");
            Workload pb = c.pod(b, "rt-mtu", "pb");
            assertThat(pa.netns().exec("ip", "link", "show", "eth0")).contains("mtu 8950");
            countVxlan(a);
            awaitTcp(pa, pb);
            assertThat(a.netns().exec("ip", "link", "show", "vxlan.calico")).contains("mtu 8950");

            long before = vxlanSent(a);
            NetNs.Result full = pingDf(pa, pb, 8950 - 28);
            assertThat(full.status()).as("full-size DF ping across nodes: %s", full.output()).isZero();
            assertThat(vxlanSent(a)).as("it went encapsulated").isGreaterThan(before);
            NetNs.Result tooBig = pingDf(pa, pb, 8950 - 27);
            assertThat(tooBig.status()).as("one byte more").isNotZero();
            assertThat(tooBig.output()).contains("message too long");

            // A's host MTU drops: vxlan.calico's MTU changes in place (same device) and the MTU file follows.
            String index = a.netns().exec("cat", "/sys/class/net/vxlan.calico/ifindex").strip();
            c.underlayMtu(a, 1500);
            Await.until("vxlan.calico on A at 1450", WAIT,
                    () -> a.netns().exec("ip", "link", "show", "vxlan.calico").contains("mtu 1450"));
            Await.until("A's pod MTU file at 1450", WAIT, () -> c.podMtu(a).equals(java.util.OptionalInt.of(1450)));
            assertThat(a.netns().exec("cat", "/sys/class/net/vxlan.calico/ifindex").strip()).isEqualTo(index);
            assertThat(c.podMtu(b).getAsInt()).as("B's host MTU did not change").isEqualTo(8950);
        }
    }

    /**
     * Dual-stack, so that IPv6 CrossSubnet is checked on the same nodes: the IPv6 underlay is
     * {@code fd00:30:<subnet>::/64}, routed between the bridges like IPv4; then node C is removed and
     * its routes and VTEPs of both families go from A.
     */
    @Test
    void crossSubnetEncapsulatesOnlyBetweenSubnetsForBothFamiliesAndARemovedNodesRoutesGo() {
        try (MultiNodeCluster c = new MultiNodeCluster(datastore, Backend.NFTABLES, true, "rt-")) {
            c.pool(EncapsulationMode.CrossSubnet, EncapsulationMode.Never);
            ClusterNode a = c.addNode("rt-node-a", 1, 0);
            ClusterNode b = c.addNode("rt-node-b", 2, 0);
            ClusterNode far = c.addNode("rt-node-c", 3, 1);
            Workload pa = c.pod(a, "rt-cross", "pa");
            Workload pb = c.pod(b, "rt-cross", "pb");
            Workload pc = c.pod(far, "rt-cross", "pc");
            countVxlan(a);
            a.netns().exec("nft", "add table ip6 v6count");
            a.netns().exec("nft", "add chain ip6 v6count out { type filter hook output priority 0 ; }");
            a.netns().exec("nft", "add rule ip6 v6count out udp dport 4789 counter");
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

            // IPv6, same subnet: a plain route via B's IPv6 address, no IPv6 VXLAN.
            Await.until("pa -> pb over IPv6", WAIT, () -> tcp6(c, pa, pb));
            assertThat(a.netns().exec("ip", "-6", "route", "show", "proto", "80"))
                    .contains("fd00:75:0:2::/122 via fd00:30::12 dev eth0");
            Matcher sent6 = PACKETS.matcher(a.netns().exec("nft", "list chain ip6 v6count out"));
            assertThat(sent6.find() && Long.parseLong(sent6.group(1)) == 0).as("no IPv6 VXLAN within the subnet").isTrue();
            // IPv6, another subnet: vxlan-v6.calico.
            Await.until("pa -> pc over IPv6", WAIT, () -> tcp6(c, pa, pc));
            Await.until("pc -> pa over IPv6", WAIT, () -> tcp6(c, pc, pa));
            assertThat(a.netns().exec("ip", "-6", "route", "show", "proto", "80"))
                    .containsPattern("fd00:75:0:3::/122 via fd00:75:0:3:: dev vxlan-v6.calico .*onlink");
            sent6 = PACKETS.matcher(a.netns().exec("nft", "list chain ip6 v6count out"));
            assertThat(sent6.find() && Long.parseLong(sent6.group(1)) > 0).as("IPv6 VXLAN between subnets").isTrue();

            // Node C removed: A drops its routes and VTEPs of both families.
            c.removeNode(far);
            // The block goes first (its routes), then the Node (its VTEPs): each in its own update.
            Await.until("A's routes to C's blocks gone", WAIT, () -> !routes(a).contains("10.75.3.0/26")
                    && !a.netns().exec("ip", "-6", "route", "show", "proto", "80").contains("fd00:75:0:3::/122"));
            Await.until("A's VTEP entries for C gone", WAIT, () -> !neighbours(a).contains("10.75.3.0")
                    && !a.netns().exec("ip", "-6", "neigh", "show", "dev", "vxlan-v6.calico").contains("fd00:75:0:3::")
                    && !a.netns().exec("bridge", "fdb", "show", "dev", "vxlan-v6.calico").contains("fd00:30:1::13"));
            assertThat(tcp6(c, pa, pb)).as("pa -> pb over IPv6 unaffected").isTrue();
        }
    }
}
