package calico.typha.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.libcalico.health.PrometheusMetricsServer;
import calico.libcalico.syncer.SyncerCallbacks;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.EtcdServerExtension;
import calico.libcalico.typha.SyncerType;
import calico.libcalico.typha.TyphaClient;
import calico.libcalico.typha.TyphaClientOptions;
import calico.typha.server.TyphaCalicoMetrics;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/** The Spring application as deployed: TYPHA_* properties, probes on the health port, metrics. */
class TyphaApplicationTest {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> get(int port, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The status of a GET, or -1 while nothing answers. */
    private int status(int port, String path) {
        try {
            return get(port, path).statusCode();
        } catch (Exception e) {
            return -1;
        }
    }

    @Test
    void servesClientsProbesAndMetrics() throws Exception {
        try (ConfigurableApplicationContext ctx = new SpringApplicationBuilder(TyphaApplication.class).run(
                "--typha.etcd-endpoints=" + ETCD.endpoint(), "--typha.server-port=0", "--server.port=0",
                "--calico.health.port=0", "--calico.health.host=127.0.0.1", "--TYPHA_PROMETHEUSMETRICSENABLED=true",
                "--TYPHA_PROMETHEUSMETRICSHOST=127.0.0.1", "--TYPHA_PROMETHEUSMETRICSPORT=0")) {
            int health = Integer.parseInt(ctx.getEnvironment().getProperty("local.management.port"));
            int calicoPort = ctx.getBean(PrometheusMetricsServer.class).boundPort();
            int grpc = ctx.getBean(TyphaDaemon.class).port();
            Await.until("typha ready", Duration.ofSeconds(30), () -> status(health, "/readiness") == 200);
            assertThat(get(health, "/liveness").statusCode()).isEqualTo(200);

            CountDownLatch inSync = new CountDownLatch(1);
            try (TyphaClient c = new TyphaClient(TyphaClientOptions.plaintext(List.of("127.0.0.1:" + grpc), "node-1",
                    SyncerType.FELIX), new SyncerCallbacks() {
                        @Override
                        public void onStatusUpdated(SyncerStatus status) {
                            if (status == SyncerStatus.IN_SYNC) {
                                inSync.countDown();
                            }
                        }

                        @Override
                        public void onUpdates(List<Update> updates) {
                        }
                    })) {
                c.start();
                assertThat(inSync.await(30, TimeUnit.SECONDS)).isTrue();
                String metrics = get(health, "/actuator/prometheus").body();
                assertThat(metrics).contains("typha_connections{application=\"typha\"} 1.0", "typha_snapshot_size{",
                        "typha_snapshot_age_seconds{", "typha_fanout_latency", "typha_connections_accepted_total",
                        "calico_health_ready{application=\"typha\"} 1.0", "typha_clients_dropped_total");

                // Calico's names on Calico's port: every served row of the table, its type and labels
                String calico = get(calicoPort, "/metrics").body();
                assertThat(TyphaCalicoMetrics.TABLE.problemsIn(calico)).isEmpty();
                assertThat(calico).contains("typha_connections_active{application=\"typha\"} 1.0",
                        "typha_connections_streaming{application=\"typha\",syncer=\"felix\"} 1.0",
                        "typha_connections_accepted{application=\"typha\"} 1.0",
                        "typha_snapshots_generated{application=\"typha\",syncer=\"felix\"} 1.0")
                        .doesNotContain("typha_connections_accepted_total");
            }
        }
    }

    /** TYPHA_PROMETHEUSMETRICS*: /metrics on its own port, the probes stay on the health port; off by default. */
    @Test
    void prometheusMetricsOnTheirOwnPort() throws Exception {
        try (ConfigurableApplicationContext ctx = new SpringApplicationBuilder(TyphaApplication.class).run(
                "--typha.datastore-type=memory", "--typha.server-port=0", "--server.port=0",
                "--calico.health.port=0", "--calico.health.host=127.0.0.1", "--TYPHA_PROMETHEUSMETRICSENABLED=true",
                "--TYPHA_PROMETHEUSMETRICSHOST=127.0.0.1", "--TYPHA_PROMETHEUSMETRICSPORT=0")) {
            int metricsPort = ctx.getBean(PrometheusMetricsServer.class).boundPort();
            int health = Integer.parseInt(ctx.getEnvironment().getProperty("local.management.port"));
            assertThat(metricsPort).isPositive().isNotEqualTo(health);
            HttpResponse<String> metrics = get(metricsPort, "/metrics");
            assertThat(metrics.statusCode()).isEqualTo(200);
            assertThat(metrics.body()).contains("typha_connections{", "typha_clients_dropped_total{");
            assertThat(get(metricsPort, "/readiness").statusCode()).as("no probes on the metrics port").isEqualTo(404);
            assertThat(get(health, "/liveness").statusCode()).isEqualTo(200);
        }
        try (ConfigurableApplicationContext ctx = new SpringApplicationBuilder(TyphaApplication.class).run(
                "--typha.datastore-type=memory", "--typha.server-port=0", "--server.port=0",
                "--calico.health.port=0")) {
            assertThat(ctx.getBeansOfType(PrometheusMetricsServer.class)).as("Calico's default: disabled").isEmpty();
            assertThat(ctx.getEnvironment().getProperty("typha.prometheus-metrics-port")).isEqualTo("9093");
        }
    }

    /** typha-service's DESIGN.md prints the table the scrape above is checked against. */
    @Test
    void designTableIsTheCheckedOne() throws Exception {
        assertThat(java.nio.file.Files.readString(java.nio.file.Path.of("DESIGN.md")))
                .contains(TyphaCalicoMetrics.TABLE.markdown());
    }

    @Test
    void badSettingsFailStartupNamingTheVariable() {
        assertThatThrownBy(() -> new SpringApplicationBuilder(TyphaApplication.class).run(
                "--typha.connection-rebalancing-mode=sideways", "--server.port=0", "--calico.health.port=0"))
                .hasStackTraceContaining("TYPHA_CONNECTIONREBALANCINGMODE")
                .hasStackTraceContaining("sideways");
        assertThatThrownBy(() -> new SpringApplicationBuilder(TyphaApplication.class).run(
                "--typha.ca-file=/x/ca.crt", "--server.port=0", "--calico.health.port=0"))
                .hasStackTraceContaining("TYPHA_SERVERCERTFILE");
        assertThatThrownBy(() -> new SpringApplicationBuilder(TyphaApplication.class).run(
                "--typha.datastore-type=memory", "--TYPHA_PROMETHEUSMETRICSPORT=70000", "--server.port=0",
                "--calico.health.port=0"))
                .hasStackTraceContaining("TYPHA_PROMETHEUSMETRICSPORT");
    }
}
