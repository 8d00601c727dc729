package calico.confd.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.confd.Await;
import calico.confd.app.ConfdApplication;
import calico.libcalico.testing.MainProcess;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * confd's plain main: a bad variable stops it naming the variable and the reason; the health port
 * answers as Actuator did (probe JSON, 503 with OUT_OF_SERVICE / DOWN, the {@code bgp} component,
 * Prometheus text); SIGTERM stops the process cleanly. The process tests run the real main class.
 */
class ConfdWiringTest {

    private static final Duration WAIT = Duration.ofSeconds(90);

    @TempDir
    Path tmp;

    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> get(int port, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private Map<String, String> variables(String... more) {
        Map<String, String> v = new HashMap<>(Map.of("NODENAME", "node-1", "DATASTORE_TYPE", "memory",
                "CALICO_BIRD_SOCKET", tmp.resolve("no-bird.ctl").toString(), "CALICO_BIRD_CONFIG",
                tmp.resolve("bird.cfg").toString(), "CONFD_ADMINPORT", "0", "CONFD_ADMINHOST", "127.0.0.1",
                "CONFD_HEALTHPORT", "0", "CONFD_HEALTHHOST", "127.0.0.1"));
        for (int i = 0; i < more.length; i += 2) {
            v.put(more[i], more[i + 1]);
        }
        return v;
    }

    @Test
    void badVariablesAreRefusedNamingTheVariableAndTheReason() throws Exception {
        assertThatThrownBy(() -> ConfdApplication.start(variables("CONFD_HEALTHPORT", "nine")))
                .hasMessage("CONFD_HEALTHPORT: \"nine\" is not a port number");
        assertThatThrownBy(() -> ConfdApplication.start(variables("CONFD_ADMINPORT", "70000")))
                .hasMessage("CONFD_ADMINPORT: 70000 is not a port number (0-65535)");
        assertThatThrownBy(() -> ConfdApplication.start(variables("CONFD_HEALTHENABLED", "yes")))
                .hasMessage("CONFD_HEALTHENABLED: \"yes\" is not true or false");
        assertThatThrownBy(() -> ConfdApplication.start(variables("CALICO_CONFD_RESYNC_INTERVAL", "soon")))
                .hasMessage("confd.resync-interval (CALICO_CONFD_RESYNC_INTERVAL): \"soon\" is not a number of seconds");
        assertThatThrownBy(() -> ConfdApplication.start(variables("FELIX_TYPHAREADTIMEOUT", "0")))
                .hasMessageContaining("TYPHAREADTIMEOUT").hasMessageContaining("must be positive");
        assertThatThrownBy(() -> ConfdApplication.start(variables("NODENAME", "", "HOSTNAME", " ")))
                .hasMessageContaining("NODENAME or HOSTNAME").hasMessageContaining("required");
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            assertThatThrownBy(() -> ConfdApplication.start(variables("CONFD_ADMINPORT",
                    Integer.toString(taken.getLocalPort())))).hasMessageContaining("CONFD_ADMINPORT: cannot listen on");
        }

        // The process: one line naming the variable on stderr, exit status 1, nothing served.
        Process p = confd(tmp.resolve("bad.log"), Map.of("NODENAME", "node-1", "DATASTORE_TYPE", "consul"));
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isEqualTo(1);
        assertThat(new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8))
                .contains("confd: confd.datastore-type (DATASTORE_TYPE): \"consul\" is not one of");
    }

    /** BGP on without a BIRD: live, not ready, {@code bgp} DOWN naming BIRD's socket; the answers Actuator gave. */
    @Test
    void healthAnswersAsActuatorDid() throws Exception {
        try (ConfdApplication app = ConfdApplication.start(variables())) {
            int health = app.healthPort();
            HttpResponse<String> live = get(health, "/liveness");
            assertThat(live.statusCode()).isEqualTo(200);
            assertThat(live.headers().firstValue("Content-Type")).contains("application/json");
            assertThat(live.body()).startsWith("{\"components\":{\"calicoLiveness\":{\"details\":{\"reporters\":{\"confd\":"
                    + "{\"live\":true,").endsWith("\"status\":\"UP\"}},\"status\":\"UP\"}");
            HttpResponse<String> ready = get(health, "/readiness");
            assertThat(ready.statusCode()).isEqualTo(503);
            assertThat(ready.body()).contains("\"confd\":{\"ready\":false,").endsWith("\"status\":\"OUT_OF_SERVICE\"}");
            Await.until("the bgp component DOWN: no BIRD on the socket", WAIT, () -> get(health, "/actuator/health").body()
                    .contains("\"bgp\":{\"details\":{\"birdError\":"));
            HttpResponse<String> all = get(health, "/actuator/health");
            assertThat(all.statusCode()).isEqualTo(503);
            assertThat(all.body()).contains("\"calicoReadiness\":", "\"calicoLiveness\":").endsWith("\"status\":\"DOWN\"}");
            String metrics = get(health, "/actuator/prometheus").body();
            assertThat(metrics).contains("calico_health_live{application=\"confd\"} 1.0",
                    "calico_health_ready{application=\"confd\"} 0.0", "confd_bird_up{application=\"confd\"} 0.0",
                    "jvm_memory_used_bytes{");
            assertThat(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + health + "/readiness"))
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString()).statusCode())
                    .isEqualTo(405);
            assertThat(get(app.adminPort(), "/peers").body()).contains("\"node\":\"node-1\"", "\"birdReachable\":false");
        }
    }

    /** The real main: ready with BGP off, SIGTERM stops it through its shutdown hook, its ports freed. */
    @Test
    void sigtermStopsTheProcess() throws Exception {
        int health;
        int admin;
        try (ServerSocket a = new ServerSocket(0); ServerSocket b = new ServerSocket(0)) {
            health = a.getLocalPort();
            admin = b.getLocalPort();
        }
        Path log = tmp.resolve("confd.log");
        Process p = confd(log, Map.of("CALICO_NETWORKING_BACKEND", "none", "CONFD_HEALTHHOST", "127.0.0.1",
                "CONFD_ADMINHOST", "127.0.0.1"), "--CONFD_HEALTHPORT=" + health, "--CONFD_ADMINPORT=" + admin);
        try {
            Await.until("confd ready", WAIT, () -> {
                try {
                    return get(health, "/readiness").statusCode() == 200;
                } catch (IOException e) {
                    assertThat(p.isAlive()).as("confd running").isTrue();
                    return false;
                }
            });
            assertThat(get(health, "/readiness").body()).contains("BGP disabled (CALICO_NETWORKING_BACKEND=none)");
            MainProcess.stopsOnSigterm(p, log, health, "confd stopped");
        } finally {
            p.destroyForcibly();
        }
    }

    /** The real main, with only {@code env} as its environment; stdout to {@code log}. */
    private static Process confd(Path log, Map<String, String> env, String... args) throws IOException {
        return MainProcess.start(ConfdApplication.class, List.of("-Xmx96m"), log, env, args);
    }
}
