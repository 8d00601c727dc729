package calico.felix.dataplane.wireguard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.api.model.Node;
import calico.api.model.ResourceKey;
import calico.dataplane.wireguard.UserspaceWireguard;
import calico.dataplane.wireguard.WireguardState;
import calico.dataplane.testing.NetNs;
import calico.libcalico.syncer.Update;
import calico.libcalico.testing.Await;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two nodes on a veth underlay, each a network namespace with a kernel dataplane fed by its own
 * calculation graph (the same resources, as two felixes would read them), and a pod on each.
 * WireGuard runs over wireguard-go (this kernel has no wireguard module). Each node publishes
 * the key its dataplane made by writing it into its Node's status, as felix does: the peers come
 * from those Nodes. Then pod to pod crosses the tunnel, and an nft counter on node A's uplink
 * shows the underlay carried only UDP to the WireGuard port; a removed node's peer and routes
 * go; WireGuard turned off removes the device, the rule and the table's routes; a wireguard-go
 * that dies is started again (the link monitor sees its device go) and its new key published.
 */
class WireguardTwoNodesTest {

    static final String DEV = TwoNodeUnderlay.DEVICE;
    private GraphNodes nodes;
    private GraphNodes.Side a;
    private GraphNodes.Side b;

    @BeforeEach
    void nodes() {
        assumeTrue(UserspaceWireguard.installed(), "wireguard-go is not installed (scripts/lib/install-deps.sh)");
        nodes = new GraphNodes("wg-n", "10.99.0", "10.244");
        a = nodes.a;
        b = nodes.b;
    }

    @AfterEach
    void cleanUp() {
        if (nodes != null) {
            nodes.close();
        }
    }

    private void startWithWireguard() {
        nodes.startWithWireguard();
        assertThat(a.dataplane.errors()).isEmpty();
        assertThat(a.published.get()).hasSize(44).isNotEqualTo(b.published.get());
        assertThat(a.device().publicKey().base64()).isEqualTo(a.published.get());
    }

    @Test
    void podsTalkAcrossNodesOnlyThroughWireguardAndARemovedNodesPeerGoes() {
        startWithWireguard();
        WireguardState devA = a.device();
        assertThat(devA.listenPort()).isEqualTo(51820);
        assertThat(devA.fwmark()).isEqualTo(0x100000);
        assertThat(devA.peers()).hasSize(1);
        var peerB = devA.peers().values().iterator().next();
        assertThat(peerB.publicKey().base64()).isEqualTo(b.published.get());
        assertThat(peerB.endpoint().toString()).endsWith("10.99.0.2:51820");
        assertThat(peerB.allowedIps()).extracting(Object::toString).containsExactlyInAnyOrder("10.244.1.5/32", "10.244.1.1/32");
        assertThat(a.ns.exec("ip", "rule", "show")).contains("99:\tnot from all fwmark 0x100000/0x100000 lookup 1");
        assertThat(a.ns.exec("ip", "route", "show", "table", "1")).contains("10.244.1.5 dev wireguard.cali proto 80");

        a.ns.exec("nft", "add table inet wgcount; add chain inet wgcount out { type filter hook postrouting priority 0; }; "
                + "add rule inet wgcount out oifname eth1 meta nfproto ipv4 udp dport 51820 counter; "
                + "add rule inet wgcount out oifname eth1 meta nfproto ipv4 udp dport != 51820 counter; "
                + "add rule inet wgcount out oifname eth1 meta nfproto ipv4 meta l4proto != udp counter");
        NetNs podA = nodes.net.podA;
        NetNs podB = nodes.net.podB;
        assertThat(podA.pings("10.244.1.5", Duration.ofSeconds(10))).isTrue();
        try (NetNs.Listener l = podB.tcpListener("10.244.1.5", 8080)) {
            assertThat(podA.tcpConnects("10.244.1.5", 8080, Duration.ofSeconds(5))).isTrue();
        }
        List<Long> counts = counters(a.ns.exec("nft", "list table inet wgcount"));
        assertThat(counts.get(0)).as("UDP to the WireGuard port on the underlay").isPositive();
        assertThat(counts.subList(1, 3)).as("anything else on the underlay").containsExactly(0L, 0L);

        // Node B goes: its peer and its routes go on node A.
        a.feed(List.of(Update.deleted(ResourceKey.of(calico.api.model.ResourceKind.WORKLOAD_ENDPOINT, "test",
                        "node-b-k8s-pod-b-eth0"), nodes.nextRevision()),
                Update.deleted(ResourceKey.of(calico.api.model.ResourceKind.NODE, "node-b"), nodes.nextRevision())));
        assertThat(a.device().peers()).isEmpty();
        assertThat(a.ns.exec("ip", "route", "show", "table", "1")).doesNotContain("10.244.1");
        assertThat(podA.pings("10.244.1.5", Duration.ofSeconds(1))).isFalse();
        assertThat(a.dataplane.errors()).isEmpty();
    }

    @Test
    void turningWireguardOffRemovesTheDeviceRuleAndRoutesAndWithdrawsTheKey() {
        startWithWireguard();
        assertThat(a.ns.exec("ip", "route", "show", "table", "1")).contains("wireguard.cali");

        a.feed(nodes.set(GraphNodes.felixConfig(Map.of("wireguardEnabled", false))));

        assertThat(a.ns.tryExec("ip", "link", "show", DEV).status()).isNotZero();
        assertThat(a.ns.exec("ip", "rule", "show")).doesNotContain("lookup 1");
        assertThat(a.ns.exec("ip", "route", "show", "table", "1")).isBlank();
        assertThat(a.published.get()).isNull();
        assertThat(a.dataplane.errors()).isEmpty();
        // The daemon went with its device.
        Await.until("wireguard-go gone with its device", Duration.ofSeconds(10), () -> !Files.exists(TwoNodeUnderlay.socketDir(a.ns).resolve(DEV + ".sock")));
    }

    @Test
    void aDeadWireguardGoIsStartedAgainAndItsNewKeyPublished() {
        startWithWireguard();
        NetNs podA = nodes.net.podA;
        String oldKey = a.published.get();
        // The node namespace holds no process but the daemon (pods have namespaces of their own).
        String pids = execOut("ip", "netns", "pids", a.ns.name());
        assertThat(pids.strip()).matches("\\d+");
        execOut("kill", pids.strip());

        String newKey = Await.until("a new key published", Duration.ofSeconds(20), () -> a.published.get(),
                k -> k != null && !k.equals(oldKey) && !k.equals("none yet"));
        assertThat(a.device().publicKey().base64()).isEqualTo(newKey);
        nodes.publishKeys();
        assertThat(podA.pings("10.244.1.5", Duration.ofSeconds(10))).isTrue();
        assertThat(a.dataplane.errors()).isEmpty();
    }

    @Test
    void aDeletedRuleAndRouteAreRepairedByTheRefresh() {
        nodes.startWithWireguard(Map.of("routeRefreshInterval", "1s"));
        a.ns.exec("ip", "rule", "del", "priority", "99");
        a.ns.exec("ip", "route", "del", "10.244.1.5/32", "table", "1");

        Await.until("the rule and the route back", Duration.ofSeconds(10),
                () -> a.ns.exec("ip", "rule", "show").contains("99:\tnot from all fwmark 0x100000/0x100000 lookup 1")
                        && a.ns.exec("ip", "route", "show", "table", "1").contains("10.244.1.5 dev wireguard.cali"));
        assertThat(nodes.net.podA.pings("10.244.1.5", Duration.ofSeconds(10))).isTrue();
    }

    @Test
    void aHostEndpointWithoutPolicyOnTheUnderlayLeavesTheWireguardPortOpenAsCalicoDoes() {
        startWithWireguard();
        NetNs podA = nodes.net.podA;
        // Before any tunnel traffic (no conntrack entry to let it pass), both nodes' underlay interfaces become
        // host endpoints with no policy: everything but failsafe ports and WireGuard's is refused to and from the hosts.
        for (GraphNodes.Side s : new GraphNodes.Side[] {a, b}) {
            String ip = s == a ? "10.99.0.1" : "10.99.0.2";
            s.feed(nodes.set(new calico.api.model.HostEndpoint(calico.api.model.ObjectMeta.named(s.name + "-eth1"),
                    new calico.api.model.HostEndpointSpec(s.name, "eth1", List.of(ip), List.of(), null))));
        }
        assertThat(a.ns.exec("sh", "-c", "iptables-save; nft list ruleset"))
                .contains("Allow incoming IPv4 Wireguard packets").contains("Allow outgoing IPv4 Wireguard packets");
        try (NetNs.Listener l = a.ns.tcpListener("10.99.0.1", 8081)) {
            assertThat(b.ns.tcpConnects("10.99.0.1", 8081, Duration.ofSeconds(2)))
                    .as("node B -> node A's host: refused by the host endpoint").isFalse();
        }
        assertThat(podA.pings("10.244.1.5", Duration.ofSeconds(10))).as("pod A -> pod B through the tunnel").isTrue();
        try (NetNs.Listener l = nodes.net.podB.tcpListener("10.244.1.5", 8080)) {
            assertThat(podA.tcpConnects("10.244.1.5", 8080, Duration.ofSeconds(5)))
                    .as("pod A -> pod B through the tunnel, across both host endpoints").isTrue();
        }
        assertThat(a.dataplane.errors()).isEmpty();
    }

    @Test
    void hostEncryptionSendsHostToHostTrafficThroughTheTunnel() {
        nodes.startWithWireguard(Map.of("wireguardHostEncryptionEnabled", true));
        assertThat(a.ns.exec("ip", "route", "show", "table", "1")).contains("10.99.0.2 dev wireguard.cali proto 80");
        a.ns.exec("nft", "add table inet wgcount; add chain inet wgcount out { type filter hook postrouting priority 0; }; "
                + "add rule inet wgcount out oifname eth1 meta nfproto ipv4 udp dport 51820 counter; "
                + "add rule inet wgcount out oifname eth1 meta nfproto ipv4 meta l4proto tcp counter");
        try (NetNs.Listener l = b.ns.tcpListener("10.99.0.2", 8082)) {
            assertThat(a.ns.tcpConnects("10.99.0.2", 8082, Duration.ofSeconds(5))).as("node A -> node B's host").isTrue();
        }
        List<Long> counts = counters(a.ns.exec("nft", "list table inet wgcount"));
        assertThat(counts.get(0)).as("UDP to the WireGuard port on the underlay").isPositive();
        assertThat(counts.get(1)).as("host TCP in clear on the underlay").isZero();
        assertThat(a.dataplane.errors()).isEmpty();
    }

    private static String execOut(String... command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            assertThat(p.waitFor()).as(String.join(" ", command) + ": " + out).isZero();
            return out;
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The packet counts of an nft listing's counters, in rule order. */
    static List<Long> counters(String listing) {
        Matcher m = Pattern.compile("counter packets (\\d+)").matcher(listing);
        List<Long> out = new ArrayList<>();
        while (m.find()) {
            out.add(Long.parseLong(m.group(1)));
        }
        return out;
    }
}
