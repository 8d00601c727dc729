package calico.node.startup.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.api.model.IPPool;
import calico.api.model.Node;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import calico.dataplane.testing.NetNs;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.etcd.EtcdConfig;
import calico.libcalico.datastore.etcd.EtcdDatastore;
import calico.libcalico.testing.EtcdAdmin;
import calico.libcalico.testing.EtcdServerExtension;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The whole application as {@code ./calico up} runs it: Calico's variables as arguments, a real
 * etcd, and the node's interfaces read in a network namespace of the test's own
 * ({@code CALICO_NODE_NETNS}) while the process stays where the datastore is. Exit 0 when done,
 * 1 with one line naming the variable when not.
 */
class NodeStartupApplicationTest {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    private static NetNs ns;

    @org.junit.jupiter.api.io.TempDir
    static Path dir;

    @BeforeAll
    static void node() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        ns = NetNs.create("nsa");
        ns.exec("ip", "link", "add", "eth0", "type", "veth", "peer", "name", "peer0");
        ns.exec("ip", "addr", "add", "10.7.0.5/24", "dev", "eth0");
        ns.exec("ip", "link", "set", "peer0", "up");
        ns.exec("ip", "link", "set", "eth0", "up");
    }

    @AfterAll
    static void done() {
        if (ns != null) {
            ns.close();
        }
    }

    @BeforeEach
    void wipe() {
        EtcdAdmin.wipe(ETCD.endpoint());
    }

    private static String[] args(String... extra) {
        List<String> a = new ArrayList<>(List.of("--HOSTNAME=", "--NODENAME=app-node", "--DATASTORE_TYPE=etcdv3",
                "--ETCD_ENDPOINTS=" + ETCD.endpoint(), "--CALICO_NODE_NETNS=" + ns.name(),
                "--CALICO_IPV4POOL_CIDR=10.250.0.0/16", "--CALICO_IPV4POOL_VXLAN=Always", "--CALICO_IPV6POOL_CIDR=none",
                "--CALICO_NODENAME_FILE=" + dir.resolve("lib/calico/nodename")));
        for (String e : extra) {
            a.removeIf(d -> d.substring(0, d.indexOf('=')).equals(e.substring(0, e.indexOf('='))));
            a.add(e);
        }
        return a.toArray(String[]::new);
    }

    @Test
    void startsUpOnceAndAgainWithoutWriting() throws Exception {
        assertThat(NodeStartupApplication.run(args("--IP=autodetect"))).isZero();
        Path nodename = dir.resolve("lib/calico/nodename");
        assertThat(nodename).as("the CNI plugin's nodename_file, its directory made").hasContent("app-node");
        Object inode = Files.getAttribute(nodename, "unix:ino");
        try (Datastore ds = new EtcdDatastore(EtcdConfig.of(ETCD.endpoint()))) {
            Node node = (Node) ds.get(ResourceKey.of(ResourceKind.NODE, "app-node")).orElseThrow();
            assertThat(node.spec().bgp().ipv4Address()).as("first-found inside the node's namespace")
                    .isEqualTo("10.7.0.5/24");
            assertThat(node.spec().interfaces()).as("IP=autodetect: the host's interfaces, lo excluded")
                    .extracting(i -> i.name()).containsExactly("eth0", "peer0");
            assertThat(Cidr.parse("10.250.0.0/16").contains(IpAddress.parse(node.spec().ipv4VXLANTunnelAddr()))).isTrue();
            IPPool pool = (IPPool) ds.get(ResourceKey.of(ResourceKind.IP_POOL, "default-ipv4-ippool")).orElseThrow();
            long revision = ds.currentRevision();

            assertThat(NodeStartupApplication.run(args("--IP=autodetect"))).isZero();
            assertThat(ds.currentRevision()).as("a second start-up writes nothing").isEqualTo(revision);
            assertThat(Files.getAttribute(nodename, "unix:ino")).as("nor the nodename file").isEqualTo(inode);
            assertThat(ds.get(ResourceKey.of(ResourceKind.IP_POOL, "default-ipv4-ippool")).orElseThrow()
                    .metadata().resourceVersion()).isEqualTo(pool.metadata().resourceVersion());
        }
    }

    @Test
    void allocateTunnelAddrsKeepsTheAddressesRightAsPoolsAndFelixsKeyChange() throws Exception {
        assertThat(NodeStartupApplication.run(args("--IP=autodetect"))).isZero();
        Thread daemon = new Thread(() -> NodeStartupApplication.run(
                java.util.stream.Stream.concat(java.util.stream.Stream.of(NodeStartupApplication.ALLOCATE_TUNNEL_ADDRS),
                        java.util.Arrays.stream(args())).toArray(String[]::new)), "allocate-tunnel-addrs");
        daemon.start();
        try (Datastore ds = new EtcdDatastore(EtcdConfig.of(ETCD.endpoint()))) {
            // felix publishes its key after start-up: the daemon allocates the WireGuard address then.
            Node n = node(ds);
            ds.updateStatus(new Node(n.metadata(), n.spec(), new calico.api.model.NodeStatus(
                    "dGhpcyBpcyBub3QgYSByZWFsIGtleSBidXQgMzIgYnk=", null, List.of())));
            calico.libcalico.testing.Await.until("a WireGuard address in the pool", java.time.Duration.ofSeconds(30),
                    () -> node(ds).spec().wireguard() != null && Cidr.parse("10.250.0.0/16")
                            .contains(IpAddress.parse(node(ds).spec().wireguard().interfaceIPv4Address())));
            // The pool stops using VXLAN: its tunnel address goes, the WireGuard address stays.
            IPPool p = (IPPool) ds.get(ResourceKey.of(ResourceKind.IP_POOL, "default-ipv4-ippool")).orElseThrow();
            var spec = p.spec();
            ds.update(new IPPool(p.metadata(), new calico.api.model.IPPoolSpec(spec.cidr(),
                    calico.api.model.EncapsulationMode.Never, spec.ipipMode(), spec.natOutgoing(), spec.disabled(),
                    spec.disableBGPExport(), spec.blockSize(), spec.nodeSelector(), spec.namespaceSelector(),
                    spec.allowedUses(), spec.assignmentMode())));
            calico.libcalico.testing.Await.until("the VXLAN address released", java.time.Duration.ofSeconds(30),
                    () -> node(ds).spec().ipv4VXLANTunnelAddr() == null);
            assertThat(node(ds).spec().wireguard().interfaceIPv4Address()).isNotNull();
        } finally {
            daemon.interrupt();
            daemon.join(30_000);
        }
        assertThat(daemon.isAlive()).as("the daemon ends when interrupted").isFalse();
    }

    private static Node node(Datastore ds) {
        return (Node) ds.get(ResourceKey.of(ResourceKind.NODE, "app-node")).orElseThrow();
    }

    @Test
    void badSettingsExitOneNamingTheVariable() {
        assertThat(failure("--CALICO_IPV4POOL_BLOCK_SIZE=33"))
                .contains("node.ipv4-pool.block-size (CALICO_IPV4POOL_BLOCK_SIZE): 33 is not between 20 and 32");
        assertThat(failure("--IP_AUTODETECTION_METHOD=fastest"))
                .contains("IP_AUTODETECTION_METHOD").contains("\"fastest\"");
        assertThat(failure("--IP_AUTODETECTION_METHOD=interface=wlan0"))
                .contains("cannot autodetect an IPv4 address with IP_AUTODETECTION_METHOD=interface=wlan0");
        assertThat(failure("--CALICO_NODE_NETNS=no-such-ns-nsa")).contains("/run/netns/no-such-ns-nsa");
        Path notADirectory = dir.resolve("a-file");
        try {
            Files.writeString(notADirectory, "x");
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        assertThat(failure("--IP=autodetect", "--CALICO_NODENAME_FILE=" + notADirectory.resolve("nodename")))
                .contains("node.nodename-file (CALICO_NODENAME_FILE): cannot write " + notADirectory.resolve("nodename"));
    }

    @Test
    void waitForDatastoreRetriesWhileUnavailableThenStartsUp() {
        // The real etcd answers at once: WAIT_FOR_DATASTORE changes nothing then.
        assertThat(NodeStartupApplication.run(args("--IP=autodetect", "--WAIT_FOR_DATASTORE=true"))).isZero();
        // An unavailable datastore (the first three reads fail as an unreachable one does) is read again until it answers.
        java.util.concurrent.atomic.AtomicInteger reads = new java.util.concurrent.atomic.AtomicInteger();
        try (calico.libcalico.datastore.memory.MemoryDatastore memory = new calico.libcalico.datastore.memory.MemoryDatastore()) {
            Datastore flaky = (Datastore) java.lang.reflect.Proxy.newProxyInstance(Datastore.class.getClassLoader(),
                    new Class<?>[] {Datastore.class}, (proxy, method, a) -> {
                        if (method.getName().equals("get") && reads.incrementAndGet() <= 3) {
                            throw new calico.libcalico.datastore.DatastoreException.Unavailable("connection refused", null);
                        }
                        try {
                            return method.invoke(memory, a);
                        } catch (java.lang.reflect.InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
            NodeStartupApplication.awaitDatastore(flaky, "app-node", java.time.Duration.ofMillis(1));
        }
        assertThat(reads.get()).as("three unavailable reads, then one that answered").isEqualTo(4);
    }

    /** Runs with {@code extra}, expects exit 1, {@return what it printed on stderr}. */
    private static String failure(String... extra) {
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            assertThat(NodeStartupApplication.run(args(extra))).as(String.join(" ", extra)).isEqualTo(1);
        } finally {
            System.setErr(err);
        }
        String out = captured.toString(StandardCharsets.UTF_8);
        assertThat(out).contains("calico-node start-up failed: ");
        return out;
    }
}
