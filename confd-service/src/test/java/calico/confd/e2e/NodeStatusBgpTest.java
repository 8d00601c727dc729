package calico.confd.e2e;

import static calico.confd.Fixtures.affinity;
import static calico.confd.Fixtures.bgpConfig;
import static calico.confd.Fixtures.config;
import static calico.confd.Fixtures.node;
import static calico.confd.Fixtures.pool;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.CalicoNodeStatus;
import calico.api.model.CalicoNodeStatusSpec;
import calico.api.model.CalicoNodeStatusStatus;
import calico.api.model.CalicoNodeStatusStatus.Daemon;
import calico.api.model.CalicoNodeStatusStatus.LearnedFrom;
import calico.api.model.CalicoNodeStatusStatus.Peer;
import calico.api.model.ObjectMeta;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.confd.Await;
import calico.confd.nodestatus.NodeStatusReporter;
import calico.confd.render.DirectorySecrets;
import calico.libcalico.bird.NodeStatusReader;
import calico.libcalico.datastore.memory.MemoryDatastore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * CalicoNodeStatus and {@code calicoctl node status} on real BIRDs: two nodes in network
 * namespaces ({@code ns-…}), each BIRD on its own confd's config, meshed. node-1's reporter fills
 * node-1's CalicoNodeStatus from its BIRD (agent Ready with its router id, the mesh peer
 * Established, node-2's block learned from it), follows a change of classes and stops at
 * {@code updatePeriodSeconds: 0}, and never writes another node's resource; the packaged calicoctl
 * prints node-1's session table as Calico does, and fails with a clear message on a missing socket.
 */
class NodeStatusBgpTest {

    private static final Path CALICOCTL_JAR = Path.of("..", "calicoctl", "target", "calicoctl.jar");

    @TempDir
    Path tmp;

    private NetnsLab lab;
    private MemoryDatastore datastore;
    private ConfdNodes confd;
    private NodeStatusReporter reporter;

    @AfterEach
    void tearDown() throws Exception {
        NetnsLab.closeAll(reporter, confd, datastore, lab);
    }

    @Test
    void reporterAndCalicoctlShowTheEstablishedMesh() throws Exception {
        NetnsLab.assumeBirdAndRoot();
        assertThat(CALICOCTL_JAR).as("the packaged calicoctl (built before confd-service in the reactor)").exists();
        lab = new NetnsLab(tmp, 2, "ns");
        datastore = new MemoryDatastore();
        datastore.create(pool("pool", "10.98.0.0/16", false, false));
        datastore.create(bgpConfig("default", config(true, 64512L)));
        for (int i = 1; i <= 2; i++) {
            datastore.create(node("node-" + i, NetnsLab.address(i) + "/24"));
            datastore.create(affinity("node-" + i, "10.98." + i + ".0/26"));
        }
        confd = new ConfdNodes(lab, datastore);
        for (int i = 1; i <= 2; i++) {
            confd.start(i, new DirectorySecrets(tmp.resolve("no-secrets")), Duration.ofMillis(500));
        }
        confd.startBirds(2);
        await("node-1 learns node-2's block over the mesh", () -> lab.birdRoutes(1).contains("10.98.2.0/26 via 10.99.0.2"));

        // 1. The reporter fills node-1's request with every class; node-2's request is not node-1's to write.
        reporter = new NodeStatusReporter(datastore, "node-1", new NodeStatusReader(lab.control(1)), Clock.systemUTC());
        reporter.start();
        datastore.create(request("node-1-status", "node-1", List.of("Agent", "BGP", "Routes"), 1));
        datastore.create(request("node-2-status", "node-2", List.of("Agent", "BGP", "Routes"), 1));
        CalicoNodeStatusStatus full = awaitStatus("node-1-status", "the mesh peer Established and node-2's block",
                s -> s.bgp() != null && s.bgp().numberEstablishedV4() == 1 && s.routes() != null
                        && s.routes().routesV4().stream().anyMatch(r -> r.destination().equals("10.98.2.0/26")));
        assertThat(full.lastUpdated()).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ");
        Daemon bird = full.agent().birdV4();
        assertThat(bird.state()).isEqualTo("Ready");
        assertThat(bird.routerID()).isEqualTo("10.99.0.1");
        assertThat(bird.version()).startsWith("2.");
        assertThat(bird.lastBootTime()).isNotEmpty();
        assertThat(full.bgp().numberNotEstablishedV4()).isZero();
        assertThat(full.bgp().peersV4()).singleElement().satisfies(p -> {
            assertThat(p.peerIP()).isEqualTo("10.99.0.2");
            assertThat(p.type()).isEqualTo("NodeMesh");
            assertThat(p.state()).isEqualTo("Established");
            assertThat(p.since()).isNotEmpty();
        });
        assertThat(full.routes().routesV4()).filteredOn(r -> r.destination().equals("10.98.2.0/26")).singleElement()
                .satisfies(r -> {
                    assertThat(r.type()).isEqualTo("FIB");
                    assertThat(r.gateway()).isEqualTo("10.99.0.2");
                    assertThat(r.iface()).isEqualTo("eth0");
                    assertThat(r.learnedFrom()).isEqualTo(new LearnedFrom("NodeMesh", "10.99.0.2"));
                });
        // node-1's own block: the blackhole confd gives BIRD for aggregation.
        assertThat(full.routes().routesV4()).filteredOn(r -> r.destination().equals("10.98.1.0/26"))
                .allSatisfy(r -> assertThat(r.iface()).isEqualTo("blackhole"));

        // 2. Classes changed to BGP alone: the next report has no agent and no routes.
        update("node-1-status", List.of("BGP"), 1);
        CalicoNodeStatusStatus bgpOnly = awaitStatus("node-1-status", "BGP alone",
                s -> s.agent() == null && s.routes() == null && s.bgp() != null);
        assertThat(bgpOnly.bgp().peersV4()).extracting(Peer::state).containsExactly("Established");

        // 3. updatePeriodSeconds 0: no more writes, while another request of node-1 keeps being written.
        CalicoNodeStatus stopped = update("node-1-status", List.of("BGP"), 0);
        datastore.create(request("node-1-probe", "node-1", List.of("Agent"), 1));
        String firstProbe = awaitVersion("node-1-probe", null);
        awaitVersion("node-1-probe", firstProbe);
        assertThat(get("node-1-status").metadata().resourceVersion())
                .as("a request at updatePeriodSeconds 0 is not written").isEqualTo(stopped.metadata().resourceVersion());
        assertThat(get("node-2-status").status()).as("node-2's request, seen by node-1's reporter").isNull();

        // 4. calicoctl node status on node-1's socket: Calico's table; a missing socket fails clearly.
        Result ok = calicoctl(lab.socket(1));
        assertThat(ok.exit()).as(ok.toString()).isZero();
        assertThat(ok.out()).startsWith("Calico process is running.\n\nIPv4 BGP status\n")
                .contains("| PEER ADDRESS |     PEER TYPE     | STATE |")
                .containsPattern("\\| 10\\.99\\.0\\.2 +\\| node-to-node mesh \\| up +\\| [^|]+ \\| Established +\\|")
                .contains("IPv6 BGP status\nNo IPv6 peers found.\n");
        Result missing = calicoctl(tmp.resolve("no-bird.ctl"));
        assertThat(missing.exit()).isEqualTo(1);
        assertThat(missing.out()).isEqualTo("Calico process is not running.\n");
        assertThat(missing.err()).contains("BIRD is not running").contains(tmp.resolve("no-bird.ctl").toString());
    }

    private static CalicoNodeStatus request(String name, String node, List<String> classes, int period) {
        return new CalicoNodeStatus(ObjectMeta.named(name), new CalicoNodeStatusSpec(node, classes, period));
    }

    private CalicoNodeStatus get(String name) {
        return (CalicoNodeStatus) datastore.get(new ResourceKey(ResourceKind.CALICO_NODE_STATUS, null, name)).orElseThrow();
    }

    private CalicoNodeStatus update(String name, List<String> classes, int period) {
        CalicoNodeStatus current = get(name);
        return (CalicoNodeStatus) datastore.update(new CalicoNodeStatus(current.metadata(),
                new CalicoNodeStatusSpec(current.spec().node(), classes, period), current.status()));
    }

    private CalicoNodeStatusStatus awaitStatus(String name, String what,
                                               java.util.function.Predicate<CalicoNodeStatusStatus> ok) throws Exception {
        CalicoNodeStatusStatus[] seen = new CalicoNodeStatusStatus[1];
        try {
            await(name + ": " + what, () -> {
                seen[0] = get(name).status();
                return seen[0] != null && ok.test(seen[0]);
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "\nlast status: " + seen[0] + "\nprotocols: "
                    + lab.control(1).protocols(), e);
        }
        return seen[0];
    }

    /** {@return the resourceVersion once it is written and differs from {@code than}} */
    private String awaitVersion(String name, String than) throws Exception {
        String[] v = new String[1];
        await(name + " written after version " + than, () -> {
            CalicoNodeStatus s = get(name);
            v[0] = s.metadata().resourceVersion();
            return s.status() != null && !v[0].equals(than);
        });
        return v[0];
    }

    private record Result(int exit, String out, String err) {
    }

    private static Result calicoctl(Path socket) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar", CALICOCTL_JAR.toString(), "node", "status"));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("CALICO_BIRD_SOCKET", socket.toString());
        Process p = pb.start();
        p.getOutputStream().close();
        byte[] out = p.getInputStream().readAllBytes();
        byte[] err = p.getErrorStream().readAllBytes();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException("calicoctl node status did not finish");
        }
        return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8), new String(err, StandardCharsets.UTF_8));
    }

    private static void await(String what, java.util.concurrent.Callable<Boolean> condition) throws Exception {
        Await.until(what, Duration.ofSeconds(60), condition);
    }
}
