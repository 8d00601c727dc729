package calico.felix.dataplane.wireguard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.api.codec.ResourceCodec;
import calico.api.model.FelixConfiguration;
import calico.api.model.FelixConfigurationSpec;
import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.Node;
import calico.api.model.NodeSpec;
import calico.api.model.NodeStatus;
import calico.api.model.ObjectMeta;
import calico.api.model.Profile;
import calico.api.model.ProfileSpec;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.Rule;
import calico.api.model.WorkloadEndpoint;
import calico.api.model.WorkloadEndpointSpec;
import calico.dataplane.wireguard.UserspaceWireguard;
import calico.dataplane.wireguard.WireguardBackend;
import calico.dataplane.wireguard.WireguardState;
import calico.dataplane.testing.NetNs;
import calico.felix.calc.CalculationGraph;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.dataplane.DataplaneObserver;
import calico.felix.dataplane.KernelDataplane;
import calico.felix.dataplane.KernelPolicyDrivers;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import calico.libcalico.syncer.UpdateType;
import calico.libcalico.testing.Await;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
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

    static final String DEV = "wireguard.cali";
    private final List<NetNs> namespaces = new ArrayList<>();
    private Node nodeA;
    private Node nodeB;
    private Side a;
    private Side b;
    private long revision;

    /** One node: its namespace, its graph, its dataplane and the key it published last. */
    final class Side implements AutoCloseable {
        final String name;
        final NetNs ns;
        final AtomicReference<String> published = new AtomicReference<>("none yet");
        final List<List<DataplaneUpdate>> pending = new ArrayList<>();
        final CalculationGraph graph;
        final KernelDataplane dataplane;

        Side(String name, NetNs ns) {
            this.name = name;
            this.ns = ns;
            this.graph = CalculationGraph.create(name, pending::add);
            this.dataplane = new KernelDataplane(ns.name(), new KernelPolicyDrivers(KernelDataplane.commandPrefix(ns.name())),
                    DataplaneObserver.NONE, new WireguardHost(name, socketDir(ns), published::set));
        }

        void feed(List<Update> updates) {
            graph.onUpdates(updates);
            flush();
        }

        void flush() {
            graph.flush();
            List<List<DataplaneUpdate>> batches = new ArrayList<>(pending);
            pending.clear();
            batches.forEach(dataplane::apply);
            assertThat(dataplane.awaitApplied(Duration.ofSeconds(60))).isTrue();
        }

        WireguardState device() {
            return ns.call(() -> {
                try (WireguardBackend wg = new UserspaceWireguard(KernelDataplane.commandPrefix(ns.name()), socketDir(ns))) {
                    return wg.read(DEV).orElse(null);
                }
            });
        }

        @Override
        public void close() {
            dataplane.close();
        }
    }

    static Path socketDir(NetNs ns) {
        return Path.of("/run/calico-test-wireguard", ns.name());
    }

    private NetNs ns(String prefix) {
        NetNs n = NetNs.create(prefix);
        namespaces.add(n);
        return n;
    }

    @BeforeEach
    void nodes() {
        assumeTrue(UserspaceWireguard.installed(), "wireguard-go is not installed (scripts/lib/install-deps.sh)");
        NetNs na = ns("wg-na");
        NetNs nb = ns("wg-nb");
        na.veth("eth1", nb, "eth1");
        na.exec("ip", "addr", "add", "10.99.0.1/24", "dev", "eth1");
        nb.exec("ip", "addr", "add", "10.99.0.2/24", "dev", "eth1");
        // Proxy ARP answers 169.254.1.1 only for an address routed out of another interface.
        na.exec("ip", "route", "add", "default", "dev", "eth1");
        nb.exec("ip", "route", "add", "default", "dev", "eth1");
        pod(na, "calipoda", "10.244.0.5");
        pod(nb, "calipodb", "10.244.1.5");
        a = new Side("node-a", na);
        b = new Side("node-b", nb);
    }

    private void pod(NetNs node, String hostIf, String ip) {
        NetNs pod = ns("wg-pod");
        node.veth(hostIf, pod, "eth0");
        pod.exec("ip", "addr", "add", ip + "/32", "dev", "eth0");
        pod.exec("ip", "route", "add", "default", "via", "169.254.1.1", "dev", "eth0", "onlink");
    }

    @AfterEach
    void cleanUp() throws Exception {
        for (Side s : new Side[] {a, b}) {
            if (s != null) {
                s.close();
                // The device first: a wireguard-go daemon keeps its namespace alive after `ip netns delete`.
                s.ns.tryExec("ip", "link", "del", DEV);
            }
        }
        namespaces.forEach(NetNs::close);
        for (NetNs n : namespaces) {
            Path dir = socketDir(n);
            if (Files.exists(dir)) {
                try (var files = Files.walk(dir)) {
                    files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                }
            }
        }
    }

    // ---------------------------------------------------------------- resources

    static FelixConfiguration felixConfig(Map<String, ?> spec) {
        FelixConfigurationSpec s = ResourceCodec.get().jsonMapper().convertValue(spec, FelixConfigurationSpec.class);
        return new FelixConfiguration(ObjectMeta.named("default"), s);
    }

    static Node node(String name, String ip, String wgAddr, String key) {
        NodeSpec spec = new NodeSpec(new NodeSpec.BGP(null, ip + "/24", null, null, null), null, null, null, null, null,
                new NodeSpec.Wireguard(wgAddr, null), null, null);
        return new Node(ObjectMeta.named(name), spec, key == null ? null : new NodeStatus(key, null, null));
    }

    static WorkloadEndpoint wep(String name, String node, String ip, String iface) {
        return new WorkloadEndpoint(ObjectMeta.namespaced("test", name),
                new WorkloadEndpointSpec("k8s", null, node, null, name, "eth0", null, List.of(ip + "/32"), null,
                        null, null, List.of("kns.test"), iface, "ee:ee:ee:ee:ee:ee", List.of(), null));
    }

    private List<Update> set(Resource... resources) {
        return Arrays.stream(resources).map(r -> Update.of(UpdateType.UPDATED, r, ++revision)).toList();
    }

    private void both(List<Update> updates) {
        a.feed(updates);
        b.feed(updates);
    }

    /** Starts both nodes on the same resources and lets each publish its key into its Node, as felix does. */
    private void startWithWireguard() {
        nodeA = node("node-a", "10.99.0.1", "10.244.0.1", null);
        nodeB = node("node-b", "10.99.0.2", "10.244.1.1", null);
        both(set(felixConfig(Map.of("wireguardEnabled", true)),
                new IPPool(ObjectMeta.named("pool"), IPPoolSpec.ofCidr("10.244.0.0/16")),
                new Profile(ObjectMeta.named("kns.test"), new ProfileSpec(List.of(Rule.allow()), List.of(Rule.allow()), Map.of())),
                nodeA, nodeB, wep("pod-a", "node-a", "10.244.0.5", "calipoda"),
                wep("pod-b", "node-b", "10.244.1.5", "calipodb")));
        for (Side s : new Side[] {a, b}) {
            s.graph.onStatus(SyncerStatus.IN_SYNC);
            s.flush();
        }
        assertThat(a.dataplane.errors()).isEmpty();
        String keyA = a.published.get();
        String keyB = b.published.get();
        assertThat(keyA).hasSize(44).isNotEqualTo(keyB);
        assertThat(a.device().publicKey().base64()).isEqualTo(keyA);
        nodeA = nodeA.withStatus(new NodeStatus(keyA, null, null));
        nodeB = nodeB.withStatus(new NodeStatus(keyB, null, null));
        both(set(nodeA, nodeB));
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
        NetNs podA = namespaces.get(2);
        NetNs podB = namespaces.get(3);
        assertThat(podA.pings("10.244.1.5", Duration.ofSeconds(10))).isTrue();
        try (NetNs.Listener l = podB.tcpListener("10.244.1.5", 8080)) {
            assertThat(podA.tcpConnects("10.244.1.5", 8080, Duration.ofSeconds(5))).isTrue();
        }
        List<Long> counts = counters(a.ns.exec("nft", "list table inet wgcount"));
        assertThat(counts.get(0)).as("UDP to the WireGuard port on the underlay").isPositive();
        assertThat(counts.subList(1, 3)).as("anything else on the underlay").containsExactly(0L, 0L);

        // Node B goes: its peer and its routes go on node A.
        a.feed(List.of(Update.deleted(ResourceKey.of(calico.api.model.ResourceKind.WORKLOAD_ENDPOINT, "test", "pod-b"), ++revision),
                Update.deleted(ResourceKey.of(calico.api.model.ResourceKind.NODE, "node-b"), ++revision)));
        assertThat(a.device().peers()).isEmpty();
        assertThat(a.ns.exec("ip", "route", "show", "table", "1")).doesNotContain("10.244.1");
        assertThat(podA.pings("10.244.1.5", Duration.ofSeconds(1))).isFalse();
        assertThat(a.dataplane.errors()).isEmpty();
    }

    @Test
    void turningWireguardOffRemovesTheDeviceRuleAndRoutesAndWithdrawsTheKey() {
        startWithWireguard();
        assertThat(a.ns.exec("ip", "route", "show", "table", "1")).contains("wireguard.cali");

        a.feed(set(felixConfig(Map.of("wireguardEnabled", false))));

        assertThat(a.ns.tryExec("ip", "link", "show", DEV).status()).isNotZero();
        assertThat(a.ns.exec("ip", "rule", "show")).doesNotContain("lookup 1");
        assertThat(a.ns.exec("ip", "route", "show", "table", "1")).isBlank();
        assertThat(a.published.get()).isNull();
        assertThat(a.dataplane.errors()).isEmpty();
        // The daemon went with its device.
        Await.until("wireguard-go gone with its device", Duration.ofSeconds(10), () -> !Files.exists(socketDir(a.ns).resolve(DEV + ".sock")));
    }

    @Test
    void aDeadWireguardGoIsStartedAgainAndItsNewKeyPublished() {
        startWithWireguard();
        NetNs podA = namespaces.get(2);
        String oldKey = a.published.get();
        // The node namespace holds no process but the daemon (pods have namespaces of their own).
        String pids = execOut("ip", "netns", "pids", a.ns.name());
        assertThat(pids.strip()).matches("\\d+");
        execOut("kill", pids.strip());

        String newKey = Await.until("a new key published", Duration.ofSeconds(20), () -> a.published.get(),
                k -> k != null && !k.equals(oldKey) && !k.equals("none yet"));
        assertThat(a.device().publicKey().base64()).isEqualTo(newKey);
        nodeA = nodeA.withStatus(new NodeStatus(newKey, null, null));
        both(set(nodeA));
        assertThat(podA.pings("10.244.1.5", Duration.ofSeconds(10))).isTrue();
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
