package calico.confd.e2e;

import static calico.confd.Fixtures.node;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.BGPPeer;
import calico.confd.Fixtures;
import calico.confd.app.ConfdApplication;
import calico.confd.app.ConfdService;
import calico.confd.model.BgpStore;
import calico.confd.render.BirdConfigBuilder;
import calico.confd.render.SecretSource;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.syncer.Update;
import calico.libcalico.syncer.UpdateType;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import calico.libcalico.testing.EtcdServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The Spring application as deployed on node-1 (real etcd), BIRD in a namespace beside
 * a second node's BIRD: /peers, Actuator health details, probes and Prometheus metrics report
 * the Established mesh session and a skipped peer.
 */
class ConfdApplicationTest {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    @TempDir
    Path tmp;

    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> get(int port, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void reportsPeersInRestHealthAndMetrics() throws Exception {
        try (NetnsLab lab = new NetnsLab(tmp, 2);
             ConfigurableApplicationContext ctx = new SpringApplicationBuilder(ConfdApplication.class).run(
                     "--confd.nodename=node-1", "--confd.datastore-type=etcdv3",
                     "--confd.etcd-endpoints=" + ETCD.endpoint(),
                     "--confd.bird-socket=" + lab.socket(1), "--confd.bird-config=" + lab.config(1),
                     "--confd.resync-interval=1", "--confd.peer-poll-interval=1", "--server.port=0",
                     "--server.address=127.0.0.1", "--calico.health.port=0", "--calico.health.host=127.0.0.1")) {
            int web = Integer.parseInt(ctx.getEnvironment().getProperty("local.server.port"));
            int health = Integer.parseInt(ctx.getEnvironment().getProperty("local.management.port"));
            Datastore ds = ctx.getBean(ConfdService.class).datastore();
            var n1 = ds.create(node("node-1", NetnsLab.address(1) + "/24"));
            var n2 = ds.create(node("node-2", NetnsLab.address(2) + "/24"));
            ds.create(Fixtures.pool("pool", "10.98.0.0/16", false, false));
            BGPPeer bad = Fixtures.peer("no-ip-no-selector", Fixtures.peerSpec(null, null, null, 65001L, null));
            ds.create(bad);

            // node-2's BIRD runs the config confd renders for node-2 from the same resources.
            BgpStore store = new BgpStore();
            store.apply(List.of(Update.of(UpdateType.NEW, n1, 1), Update.of(UpdateType.NEW, n2, 1)));
            Files.writeString(lab.config(2), new BirdConfigBuilder(SecretSource.none())
                    .render(store.view(), "node-2", "").config());
            lab.startBird(2);
            await("node-1 config", () -> Files.exists(lab.config(1)));
            lab.startBird(1);

            await("/peers shows the mesh session Established", () -> {
                String body = get(web, "/peers").body();
                return body.contains("\"name\":\"Mesh_10_99_0_2\"") && body.contains("\"established\":true");
            });
            String peers = get(web, "/peers").body();
            assertThat(peers).contains("\"birdReachable\":true", "\"peerType\":\"mesh\"",
                    "\"source\":\"BGPPeer no-ip-no-selector\"", "needs peerIP or peerSelector");

            await("readiness", () -> get(health, "/readiness").statusCode() == 200);
            assertThat(get(health, "/liveness").statusCode()).isEqualTo(200);
            await("health details", () -> get(health, "/actuator/health").body()
                    .contains("\"Mesh_10_99_0_2\":\"Established\""));
            String h = get(health, "/actuator/health").body();
            assertThat(h).contains("\"bgp\":{", "\"status\":\"UP\"", "no-ip-no-selector");

            await("metrics", () -> get(health, "/actuator/prometheus").body()
                    .contains("confd_bgp_sessions_established{application=\"confd\",peer_type=\"mesh\"} 1.0"));
            String m = get(health, "/actuator/prometheus").body();
            assertThat(m).contains("confd_bird_up{application=\"confd\"} 1.0",
                    "confd_bgp_sessions{application=\"confd\",peer_type=\"global\"} 0.0",
                    "confd_render_passes_total{application=\"confd\",result=\"reloaded\"}",
                    "confd_config_generation{application=\"confd\"}");
            assertThat(m).doesNotContain("10.99.0.2");
        }
    }

    /** CALICO_NETWORKING_BACKEND=none: no datastore, no BIRD, healthy and ready, /peers says so. */
    @Test
    void bgpOffIsIdleAndReady() throws Exception {
        try (ConfigurableApplicationContext ctx = new SpringApplicationBuilder(ConfdApplication.class).run(
                "--confd.networking-backend=none", "--confd.nodename=", "--server.port=0",
                "--server.address=127.0.0.1", "--calico.health.port=0", "--calico.health.host=127.0.0.1")) {
            int web = Integer.parseInt(ctx.getEnvironment().getProperty("local.server.port"));
            int health = Integer.parseInt(ctx.getEnvironment().getProperty("local.management.port"));
            await("readiness", () -> get(health, "/readiness").statusCode() == 200);
            assertThat(get(web, "/peers").body()).contains("\"configResult\":\"DISABLED\"");
            assertThat(get(health, "/actuator/health").body()).contains("disabled (CALICO_NETWORKING_BACKEND=none)");
        }
    }

    private static void await(String what, Callable<Boolean> condition) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (System.nanoTime() < deadline) {
            try {
                if (condition.call()) {
                    return;
                }
            } catch (IOException ignored) {
                // not up yet
            }
            Thread.sleep(200);
        }
        throw new AssertionError("timed out waiting for " + what);
    }
}
