package calico.felix.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.libcalico.testing.Await;
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
 * felix's plain main: a bad variable stops it naming the variable and the reason; the health port answers as
 * Actuator did (probe JSON, {@code /actuator/health} with both components, Prometheus text) and the admin port as
 * Spring MVC did; SIGTERM stops the process cleanly. The process tests run the real main class.
 */
class FelixWiringTest {

    private static final Duration WAIT = Duration.ofSeconds(90);

    @TempDir
    Path tmp;

    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> get(int port, String path) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** Felix on the model dataplane and the memory datastore (never ready: no ClusterInformation), free ports. */
    private static Map<String, String> variables(String... more) {
        Map<String, String> v = new HashMap<>(Map.of("HOSTNAME", "", "FELIX_FELIXHOSTNAME", "node-1",
                "FELIX_DATASTORETYPE", "memory", "FELIX_DATAPLANEDRIVERNAME", "model", "FELIX_ADMINPORT", "0",
                "FELIX_ADMINHOST", "127.0.0.1", "FELIX_HEALTHPORT", "0", "FELIX_HEALTHHOST", "127.0.0.1"));
        for (int i = 0; i < more.length; i += 2) {
            v.put(more[i], more[i + 1]);
        }
        return v;
    }

    @Test
    void badVariablesAreRefusedNamingTheVariableAndTheReason() throws Exception {
        // FELIX_HEALTHPORT, FELIX_HEALTHENABLED, FELIX_DEBUGPORT are FelixConfiguration fields too: checked first by
        // FelixEnvironment, as Calico's config layer reads them.
        assertThatThrownBy(() -> FelixApplication.start(variables("FELIX_HEALTHPORT", "nine")))
                .hasMessage("invalid Felix environment: FELIX_HEALTHPORT (healthPort): \"nine\" is not an integer");
        assertThatThrownBy(() -> FelixApplication.start(variables("FELIX_ADMINPORT", "70000")))
                .hasMessage("FELIX_ADMINPORT: 70000 is not a port number (0-65535)");
        assertThatThrownBy(() -> FelixApplication.start(variables("FELIX_HEALTHENABLED", "yes")))
                .hasMessageContaining("FELIX_HEALTHENABLED").hasMessageContaining("yes");
        assertThatThrownBy(() -> FelixApplication.start(variables("FELIX_APPLYTIMEOUT", "soon")))
                .hasMessage("felix.apply-timeout (FELIX_APPLYTIMEOUT): \"soon\" is not a number of seconds");
        assertThatThrownBy(() -> FelixApplication.start(variables("FELIX_FELIXHOSTNAME", "", "HOSTNAME", " ")))
                .hasMessageContaining("FELIX_FELIXHOSTNAME or HOSTNAME").hasMessageContaining("required");
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            assertThatThrownBy(() -> FelixApplication.start(variables("FELIX_ADMINPORT",
                    Integer.toString(taken.getLocalPort())))).hasMessageContaining("FELIX_ADMINPORT: cannot listen on");
        }

        // The process: one line naming the variable on stderr, exit status 1.
        Process p = felix(tmp.resolve("bad.log"), Map.of("FELIX_FELIXHOSTNAME", "node-1", "DATASTORE_TYPE", "consul"));
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isEqualTo(1);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(err).startsWith("felix: felix.datastore-type (FELIX_DATASTORETYPE or DATASTORE_TYPE): \"consul\" is not one of");
        assertThat(err.strip().lines()).hasSize(1);
        Process args = felix(tmp.resolve("bad-arg.log"), Map.of("FELIX_FELIXHOSTNAME", "node-1"), "--FELIX_DEBUGPORT=x");
        assertThat(args.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(args.exitValue()).isEqualTo(1);
        assertThat(new String(args.getErrorStream().readAllBytes(), StandardCharsets.UTF_8))
                .startsWith("felix: invalid Felix environment: FELIX_DEBUGPORT (debugPort): \"x\"").hasLineCount(1);
    }

    /** Not ready (the memory datastore never says datastoreReady): the answers Actuator and Spring MVC gave. */
    @Test
    void healthAndAdminAnswerAsBefore() throws Exception {
        try (FelixApplication app = FelixApplication.start(variables())) {
            int health = app.healthPort();
            HttpResponse<String> live = get(health, "/liveness");
            assertThat(live.statusCode()).isEqualTo(200);
            assertThat(live.headers().firstValue("Content-Type")).contains("application/json");
            assertThat(live.body()).startsWith("{\"components\":{\"calicoLiveness\":{\"details\":{\"reporters\":{")
                    .contains("\"FelixStartup\":{").endsWith("\"status\":\"UP\"}},\"status\":\"UP\"}");
            HttpResponse<String> ready = get(health, "/readiness");
            assertThat(ready.statusCode()).isEqualTo(503);
            assertThat(ready.body()).contains("\"DatastoreConnection\":{").endsWith("\"status\":\"OUT_OF_SERVICE\"}");
            HttpResponse<String> all = get(health, "/actuator/health");
            assertThat(all.statusCode()).isEqualTo(503);
            assertThat(all.body()).contains("\"calicoReadiness\":", "\"calicoLiveness\":")
                    .endsWith("\"status\":\"OUT_OF_SERVICE\"}");
            String metrics = get(health, "/actuator/prometheus").body();
            assertThat(metrics).contains("calico_health_live{application=\"felix\"} 1.0",
                    "calico_health_ready{application=\"felix\"} 0.0", "felix_resyncs_total{", "jvm_memory_used_bytes{");

            int admin = app.adminPort();
            HttpResponse<String> status = get(admin, "/felix/v1/status");
            assertThat(status.statusCode()).isEqualTo(200);
            assertThat(status.body()).contains("\"dataplane\":\"ModelDataplane\"", "\"syncerStatus\":",
                    "\"took\":\"PT0S\"", "\"at\":null");
            assertThat(get(admin, "/felix/v1/dataplane").body()).isEqualTo(
                    "{\"driver\":\"model\",\"backend\":\"none\",\"errors\":[]}");
            assertThat(get(admin, "/felix/v1/endpoints").body()).isEqualTo("[]");
            HttpResponse<String> missing = get(admin, "/felix/v1/endpoints/ns1/web");
            assertThat(missing.statusCode()).isEqualTo(404);
            assertThat(missing.body()).isEqualTo("{\"status\":404,\"error\":\"no local workload endpoint ns1/web\"}");
            assertThat(get(admin, "/felix/v1/nothing").statusCode()).isEqualTo(404);
            assertThat(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + admin + "/felix/v1/status"))
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString()).statusCode())
                    .isEqualTo(405);
        }
    }

    /** The real main: serving, SIGTERM stops it through its shutdown hook, its ports freed. */
    @Test
    void sigtermStopsTheProcess() throws Exception {
        int health;
        int admin;
        try (ServerSocket a = new ServerSocket(0); ServerSocket b = new ServerSocket(0)) {
            health = a.getLocalPort();
            admin = b.getLocalPort();
        }
        Path log = tmp.resolve("felix.log");
        Map<String, String> env = new HashMap<>(variables());
        env.remove("FELIX_HEALTHPORT");
        env.remove("FELIX_ADMINPORT");
        Process p = felix(log, env, "--FELIX_HEALTHPORT=" + health, "--FELIX_ADMINPORT=" + admin);
        try {
            Await.until("felix live", WAIT, () -> {
                try {
                    return get(health, "/liveness").statusCode() == 200;
                } catch (IOException | InterruptedException e) {
                    assertThat(p.isAlive()).as("felix running").isTrue();
                    return false;
                }
            });
            assertThat(get(admin, "/felix/v1/status").statusCode()).isEqualTo(200);
            assertThat(Files.readString(log)).contains("felix started: health port " + health + ", admin port " + admin);
            MainProcess.stopsOnSigterm(p, log, health, "Felix stopped", "felix stopped");
        } finally {
            p.destroyForcibly();
        }
    }

    /** The real main, with only {@code env} as its environment; stdout to {@code log}. */
    private static Process felix(Path log, Map<String, String> env, String... args) throws IOException {
        return MainProcess.start(FelixApplication.class, List.of("-Xmx128m"), log, env, args);
    }
}
