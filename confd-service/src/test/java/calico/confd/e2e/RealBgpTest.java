package calico.confd.e2e;

import static calico.confd.Fixtures.affinity;
import static calico.confd.Fixtures.bgpConfig;
import static calico.confd.Fixtures.config;
import static calico.confd.Fixtures.node;
import static calico.confd.Fixtures.peer;
import static calico.confd.Fixtures.peerSpec;
import static calico.confd.Fixtures.pool;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.api.model.ASNumber;
import calico.api.model.BGPPassword;
import calico.api.model.BGPPeerSpec;
import calico.api.model.Node;
import calico.api.model.NodeSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.confd.Await;
import calico.libcalico.bird.BirdControl;
import calico.libcalico.bird.BirdProtocol;
import calico.confd.daemon.ConfdStatus;
import calico.confd.render.SecretSource;
import calico.libcalico.datastore.DatastoreException;
import calico.libcalico.datastore.memory.MemoryDatastore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three nodes, each a network namespace running BIRD 2 on the configuration its own confd
 * rendered from one datastore: the mesh comes up and every kernel gets the other nodes'
 * blocks; then the same datastore switches to a route reflector; then a peer removal tears its
 * sessions down; bad input is skipped while BIRD keeps its sessions.
 */
class RealBgpTest {

    private static final int N = 3;

    @TempDir
    Path tmp;

    private NetnsLab lab;
    private MemoryDatastore datastore;
    private ConfdNodes confd;

    @BeforeEach
    void setUp() throws Exception {
        lab = new NetnsLab(tmp, N);
        datastore = new MemoryDatastore();
        datastore.create(pool("pool", "10.98.0.0/16", false, false));
        for (int i = 1; i <= N; i++) {
            datastore.create(node("node-" + i, NetnsLab.address(i) + "/24"));
            datastore.create(affinity("node-" + i, "10.98." + i + ".0/26"));
        }
        confd = new ConfdNodes(lab, datastore);
        for (int i = 1; i <= N; i++) {
            confd.start(i, SecretSource.none(), Duration.ofSeconds(1));
        }
        confd.startBirds(N);
    }

    @AfterEach
    void tearDown() {
        if (confd != null) {
            confd.close();
        }
        if (datastore != null) {
            datastore.close();
        }
        if (lab != null) {
            lab.close();
        }
    }

    @Test
    void meshThenRouteReflectorThenPeerRemoval() throws Exception {
        // 1. Full mesh: two Established sessions per node, every other node's block in the kernel.
        for (int i = 1; i <= N; i++) {
            Set<String> expected = new TreeSet<>();
            for (int j = 1; j <= N; j++) {
                if (j != i) {
                    expected.add("Mesh_10_99_0_" + j);
                }
            }
            awaitEstablished(i, expected);
        }
        for (int i = 1; i <= N; i++) {
            for (int j = 1; j <= N; j++) {
                if (j != i) {
                    int node = i;
                    String route = "10.98." + j + ".0/26 via 10.99.0." + j;
                    await("node-" + i + " kernel route " + route, () -> lab.birdRoutes(node).contains(route));
                }
            }
        }

        // 2. Route reflector: mesh off, node-1 reflects for the others.
        Node rr = node("node-1", NetnsLab.address(1) + "/24", null, null, "224.0.0.1", Map.of("route-reflector", "true"));
        datastore.update(rr);
        datastore.create(bgpConfig("default", config(false, null)));
        datastore.create(peer("peer-to-rr", peerSpec(null, "!has(route-reflector)", null, null,
                "route-reflector == 'true'")));
        awaitEstablished(1, Set.of("Node_10_99_0_2", "Node_10_99_0_3"));
        awaitEstablished(2, Set.of("Node_10_99_0_1"));
        awaitEstablished(3, Set.of("Node_10_99_0_1"));
        // node-3's block reaches node-2 through the reflector, next hop unchanged.
        await("node-2 learns node-3's block via the reflector",
                () -> lab.birdRoutes(2).contains("10.98.3.0/26 via 10.99.0.3"));

        // 3. Removing the peer tears the sessions down (confd reloads BIRD over the socket).
        long before = confd.daemon(2).status().generation();
        datastore.delete(ResourceKey.of(ResourceKind.BGP_PEER, "peer-to-rr"), null);
        await("node-2's session to the reflector is gone", () -> protocols(2).stream()
                .noneMatch(p -> p.name().startsWith("Node_")));
        // BIRD may drop the session before confd records the reload that caused it.
        await("node-2's confd records a new generation", () -> confd.daemon(2).status().generation() > before);
        await("node-2 loses node-3's block", () -> !lab.birdRoutes(2).contains("10.98.3.0/26"));
    }

    /** One BIRD config carries both families: IPv6 sessions named Calico's way, IPv6 blocks in the kernel. */
    @Test
    void dualStackMesh() throws Exception {
        datastore.create(pool("pool6", "fd98::/48", false, false));
        for (int i = 1; i <= N; i++) {
            datastore.update(node("node-" + i, NetnsLab.address(i) + "/24", NetnsLab.address6(i) + "/64", null, null,
                    Map.of()));
            datastore.create(affinity("node-" + i, "fd98:0:0:" + i + "::/122"));
        }
        for (int i = 1; i <= N; i++) {
            Set<String> expected = new TreeSet<>();
            for (int j = 1; j <= N; j++) {
                if (j != i) {
                    expected.add("Mesh_10_99_0_" + j);
                    expected.add("Mesh_fd99__" + j);
                }
            }
            awaitEstablished(i, expected);
        }
        for (int i = 1; i <= N; i++) {
            for (int j = 1; j <= N; j++) {
                if (j != i) {
                    int node = i;
                    String route = "fd98:0:0:" + j + "::/122 via fd99::" + j;
                    await("node-" + i + " kernel route " + route, () -> lab.birdRoutes6(node).contains(route));
                }
            }
        }
    }

    @Test
    void badInputIsSkippedAndBirdKeepsItsSessions() throws Exception {
        awaitEstablished(1, Set.of("Mesh_10_99_0_2", "Mesh_10_99_0_3"));
        // node-2's session to node-3 is asserted below as kept, so it must be up before anything changes.
        awaitEstablished(2, Set.of("Mesh_10_99_0_1", "Mesh_10_99_0_3"));
        // Invalid AS numbers never get into the datastore.
        assertThatThrownBy(() -> datastore.create(peer("bad-as", peerSpec(null, null, "10.99.0.200", 0L, null))))
                .isInstanceOf(DatastoreException.class).hasMessageContaining("asNumber");
        datastore.create(peer("no-ip-no-selector", peerSpec(null, null, null, 65001L, null)));
        datastore.create(peer("missing-secret", new BGPPeerSpec(null, null, "10.99.0.201", ASNumber.of(65001), null,
                null, null, null, null, BGPPassword.fromSecret("bgp-passwords", "nope"), null, null, null, null, null,
                null)));
        datastore.create(new Node(ObjectMeta.named("node-9"), NodeSpec.ofBgp(null)));
        await("skipped statuses", () -> confd.daemon(1).status().skipped().size() == 3);
        String reasons = confd.daemon(1).status().skipped().stream().map(s -> s.source() + ": " + s.reason())
                .collect(Collectors.joining("\n"));
        assertThat(reasons).contains("BGPPeer no-ip-no-selector: spec: needs peerIP or peerSelector",
                "BGPPeer missing-secret: spec.password: secret \"bgp-passwords\" has no key \"nope\"",
                "Node node-9: spec.bgp: no ipv4Address or ipv6Address");
        // This node losing its address: nothing rendered, BIRD keeps the last good config and its sessions.
        datastore.update(new Node(ObjectMeta.named("node-1"), NodeSpec.ofBgp(null)));
        await("refused", () -> confd.daemon(1).status().result() == ConfdStatus.Result.REFUSED);
        assertThat(confd.daemon(1).status().message()).contains("node-1", "no ipv4Address");
        assertThat(Files.readString(lab.config(1))).contains("Mesh_10_99_0_2");
        // (The other nodes drop their sessions to node-1, which has no address for them any more.)
        assertThat(protocols(1).stream().map(BirdProtocol::name).toList()).contains("Mesh_10_99_0_2", "Mesh_10_99_0_3");
        assertThat(established(2)).contains("Mesh_10_99_0_3");
    }

    private List<BirdProtocol> protocols(int i) throws IOException {
        return lab.control(i).protocols();
    }

    private Set<String> established(int i) throws IOException {
        return protocols(i).stream().filter(BirdProtocol::established).map(BirdProtocol::name)
                .collect(Collectors.toSet());
    }

    private void awaitEstablished(int i, Set<String> names) throws Exception {
        BirdControl c = lab.control(i);
        try {
            await("node-" + i + " sessions " + names + " Established", () -> {
                Set<String> bgp = c.protocols().stream().filter(p -> "BGP".equals(p.proto()))
                        .map(BirdProtocol::name).collect(Collectors.toSet());
                return bgp.equals(names) && established(i).containsAll(names);
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "\nprotocols: " + protocols(i) + "\nstatus: "
                    + confd.daemon(i).status() + "\nlog: " + lab.log(i), e);
        }
    }

    private static void await(String what, Callable<Boolean> condition) throws Exception {
        Await.until(what, Duration.ofSeconds(90), condition);
    }
}
