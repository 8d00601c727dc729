package calico.confd.e2e;

import static calico.confd.Fixtures.node;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.BGPPeer;
import calico.api.model.CalicoNodeStatus;
import calico.api.model.CalicoNodeStatusSpec;
import calico.api.model.CalicoNodeStatusStatus;
import calico.api.model.Node;
import calico.api.model.ObjectMeta;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.confd.Await;
import calico.confd.Fixtures;
import calico.confd.app.ConfdApplication;
import calico.confd.model.BgpStore;
import calico.confd.render.BirdConfigBuilder;
import calico.confd.render.SecretSource;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.syncer.Update;
import calico.libcalico.syncer.UpdateType;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The application as deployed on node-1, BIRD in a namespace beside a second node's BIRD:
 * /peers, Actuator health details, probes, Prometheus metrics and a CalicoNodeStatus report the Established mesh
 * session and a skipped peer. Over etcd ({@link ConfdApplicationTest}) and over the kubernetes
 * datastore on a real kube-apiserver ({@link ConfdApplicationOnRealKubernetesTest}): the same
 * BGP syncer, fed by either.
 */
abstract class ConfdApplicationContract {

    @TempDir
    Path tmp;

    /** How long confd, BIRD and the endpoints may take to get there. */
    protected static final Duration WAIT = Duration.ofSeconds(90);

    private final HttpClient http = HttpClient.newHttpClient();

    /** {@return the variables that point confd at the datastore} */
    protected abstract Map<String, String> datastoreVariables();

    /** Stores {@code node}'s BGP settings where confd reads them; {@return the Node as stored}. */
    protected Node storeNode(Datastore ds, Node node) {
        return (Node) ds.create(node);
    }

    /** Checks what this datastore adds to confd's Prometheus output. */
    protected void checkDatastoreMetrics(String prometheus) {
    }

    protected HttpResponse<String> get(int port, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void reportsPeersInRestHealthAndMetrics() throws Exception {
        Map<String, String> variables = new HashMap<>(datastoreVariables());
        try (NetnsLab lab = new NetnsLab(tmp, 2)) {
            variables.putAll(Map.of("NODENAME", "node-1",
                    "CALICO_BIRD_SOCKET", lab.socket(1).toString(), "CALICO_BIRD_CONFIG", lab.config(1).toString(),
                    "CALICO_CONFD_RESYNC_INTERVAL", "1", "CALICO_CONFD_PEER_POLL_INTERVAL", "1", "CONFD_ADMINPORT", "0",
                    "CONFD_ADMINHOST", "127.0.0.1", "CONFD_HEALTHPORT", "0", "CONFD_HEALTHHOST", "127.0.0.1"));
            try (ConfdApplication app = ConfdApplication.start(variables)) {
                run(lab, app);
            }
        }
    }

    private void run(NetnsLab lab, ConfdApplication app) throws Exception {
        int web = app.adminPort();
        int health = app.healthPort();
        Datastore ds = app.service().datastore();
        var n1 = storeNode(ds, node("node-1", NetnsLab.address(1) + "/24"));
        var n2 = storeNode(ds, node("node-2", NetnsLab.address(2) + "/24"));
        ds.create(Fixtures.pool("pool", "10.98.0.0/16", false, false));
        BGPPeer bad = Fixtures.peer("no-ip-no-selector", Fixtures.peerSpec(null, null, null, 65001L, null));
        ds.create(bad);

        // node-2's BIRD runs the config confd renders for node-2 from the same resources.
        BgpStore store = new BgpStore();
        store.apply(List.of(Update.of(UpdateType.NEW, n1, 1), Update.of(UpdateType.NEW, n2, 1)));
        Files.writeString(lab.config(2), new BirdConfigBuilder(SecretSource.none())
                .render(store.view(), "node-2", "").config());
        lab.startBird(2);
        Await.until("node-1 config", WAIT, () -> Files.exists(lab.config(1)));
        lab.startBird(1);

        Await.until("/peers shows the mesh session Established", WAIT, () -> {
            String body = get(web, "/peers").body();
            return body.contains("\"name\":\"Mesh_10_99_0_2\"") && body.contains("\"established\":true");
        });
        String peers = get(web, "/peers").body();
        assertThat(peers).contains("\"birdReachable\":true", "\"peerType\":\"mesh\"",
                "\"source\":\"BGPPeer no-ip-no-selector\"", "needs peerIP or peerSelector");

        Await.until("readiness", WAIT, () -> get(health, "/readiness").statusCode() == 200);
        assertThat(get(health, "/liveness").statusCode()).isEqualTo(200);
        Await.until("health details", WAIT, () -> get(health, "/actuator/health").body()
                .contains("\"Mesh_10_99_0_2\":\"Established\""));
        String h = get(health, "/actuator/health").body();
        assertThat(h).contains("\"bgp\":{", "\"status\":\"UP\"", "no-ip-no-selector");

        Await.until("metrics", WAIT, () -> get(health, "/actuator/prometheus").body()
                .contains("confd_bgp_sessions_established{application=\"confd\",peer_type=\"mesh\"} 1.0"));
        String m = get(health, "/actuator/prometheus").body();
        assertThat(m).contains("confd_bird_up{application=\"confd\"} 1.0",
                "confd_bgp_sessions{application=\"confd\",peer_type=\"global\"} 0.0",
                "confd_render_passes_total{application=\"confd\",result=\"reloaded\"}",
                "confd_config_generation{application=\"confd\"}");
        assertThat(m).doesNotContain("10.99.0.2");
        checkDatastoreMetrics(m);

        // The app's CalicoNodeStatus reporter: node-1's request filled from node-1's BIRD (on the
        // kubernetes datastore through the status subresource).
        ds.create(new CalicoNodeStatus(ObjectMeta.named("node-1-bgp"), new CalicoNodeStatusSpec("node-1", List.of("BGP"), 1)));
        ResourceKey request = new ResourceKey(ResourceKind.CALICO_NODE_STATUS, null, "node-1-bgp");
        Await.until("CalicoNodeStatus node-1-bgp shows the mesh peer Established", WAIT, () -> {
            CalicoNodeStatusStatus s = ((CalicoNodeStatus) ds.get(request).orElseThrow()).status();
            return s != null && s.bgp() != null && s.bgp().peersV4().stream()
                    .anyMatch(p -> p.peerIP().equals("10.99.0.2") && p.state().equals("Established"));
        });
        ds.delete(request, null);
    }
}
