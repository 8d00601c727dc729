package calico.felix.e2e;

import calico.felix.app.FelixApplication;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The whole felix application, configured only through Calico's {@code FELIX_*} settings (as
 * command-line properties), talking to a real etcd and programming one network namespace. Its
 * HTTP ports are random; {@link #get} reads the admin API and {@link #awaitReady} the readiness
 * probe, as an operator and the kubelet would.
 */
final class FelixProcess implements AutoCloseable {

    private final ConfigurableApplicationContext app;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final int adminPort;
    private final int healthPort;

    FelixProcess(URI etcd, String hostNetns, Backend backend, String logSeverity) {
        List<String> args = new ArrayList<>(List.of("--server.port=0", "--server.address=127.0.0.1",
                "--calico.health.port=0", "--calico.health.host=127.0.0.1", "--HOSTNAME=",
                "--FELIX_FELIXHOSTNAME=" + Cluster.NODE, "--FELIX_DATASTORETYPE=etcdv3",
                "--FELIX_ETCDENDPOINTS=" + etcd, "--FELIX_DATAPLANENETNS=" + hostNetns,
                "--FELIX_LOGSEVERITYSCREEN=" + logSeverity, "--felix.ready-poll-initial=50ms",
                "--felix.ready-poll-max=200ms"));
        args.addAll(backend.felixArgs());
        app = new SpringApplicationBuilder(FelixApplication.class).run(args.toArray(String[]::new));
        adminPort = Integer.parseInt(app.getEnvironment().getProperty("local.server.port"));
        healthPort = Integer.parseInt(app.getEnvironment().getProperty("local.management.port"));
    }

    /** Waits for {@code /readiness} to answer 200 (datastore ready, dataplane in sync). */
    void awaitReady(Duration timeout) throws InterruptedException {
        long until = System.nanoTime() + timeout.toNanos();
        String last = "";
        while (System.nanoTime() < until) {
            HttpResponse<String> r = request(healthPort, "/readiness");
            if (r != null && r.statusCode() == 200) {
                return;
            }
            last = r == null ? "no answer" : r.statusCode() + " " + r.body();
            Thread.sleep(50);
        }
        throw new AssertionError("felix not ready after " + timeout + ": " + last);
    }

    /** {@return the body of an admin API path, or the failure} (for diagnostics). */
    String get(String path) {
        HttpResponse<String> r = request(adminPort, path);
        return r == null ? "(no answer from " + path + ")" : r.body();
    }

    /** {@return the readiness probe's body} (for diagnostics). */
    String readiness() {
        HttpResponse<String> r = request(healthPort, "/readiness");
        return r == null ? "(no answer)" : r.statusCode() + " " + r.body();
    }

    private HttpResponse<String> request(int port, String path) {
        try {
            return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).GET()
                    .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
        } catch (Exception e) {
            return null;
        }
    }

    @Override
    public void close() {
        app.close();
    }
}
