package calico.goldmane.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.goldmane.server.GoldmaneCalicoMetrics;
import calico.libcalico.goldmane.proto.Action;
import calico.libcalico.goldmane.proto.Flow;
import calico.libcalico.goldmane.proto.FlowCollectorGrpc;
import calico.libcalico.goldmane.proto.FlowKey;
import calico.libcalico.goldmane.proto.FlowListRequest;
import calico.libcalico.goldmane.proto.FlowReceipt;
import calico.libcalico.goldmane.proto.FlowUpdate;
import calico.libcalico.goldmane.proto.FlowsGrpc;
import calico.libcalico.testing.Await;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/** The application as deployed: probes and metrics on the health port, a stop that saves the open bucket. */
class GoldmaneApplicationTest {

    @TempDir
    Path snapshots;
    private final HttpClient http = HttpClient.newHttpClient();

    /** The status of a GET, or -1 while nothing answers yet. */
    private int status(int port, String path) {
        try {
            return get(port, path).statusCode();
        } catch (Exception e) {
            return -1;
        }
    }

    private HttpResponse<String> get(int port, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private ConfigurableApplicationContext run() {
        return new SpringApplicationBuilder(GoldmaneApplication.class).run("--goldmane.port=0", "--server.port=0",
                "--calico.health.port=0", "--calico.health.host=127.0.0.1",
                "--goldmane.snapshot-dir=" + snapshots);
    }

    private static long packets(ManagedChannel ch) {
        return FlowsGrpc.newBlockingStub(ch).withDeadlineAfter(20, TimeUnit.SECONDS)
                .list(FlowListRequest.getDefaultInstance()).getFlowsList().stream()
                .mapToLong(f -> f.getFlow().getPacketsIn()).sum();
    }

    @Test
    void servesProbesMetricsAndKeepsTheOpenBucketAcrossARestart() throws Exception {
        long now = System.currentTimeMillis() / 1000;
        Flow flow = Flow.newBuilder().setKey(FlowKey.newBuilder().setSourceName("a-").setDestName("b-")
                .setProto("tcp").setDestPort(80).setAction(Action.Allow)).setStartTime(now).setEndTime(now + 1)
                .setPacketsIn(9).build();
        try (ConfigurableApplicationContext ctx = run()) {
            int health = Integer.parseInt(ctx.getEnvironment().getProperty("local.management.port"));
            Await.until("goldmane ready", Duration.ofSeconds(30), () -> status(health, "/readiness") == 200);
            assertThat(get(health, "/liveness").statusCode()).isEqualTo(200);
            int port = ctx.getBean(GoldmaneDaemon.class).port();
            ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
            try {
                CountDownLatch acked = new CountDownLatch(1);
                var out = FlowCollectorGrpc.newStub(ch).connect(new StreamObserver<FlowReceipt>() {
                    @Override
                    public void onNext(FlowReceipt r) {
                        if (r.getAckSeq() == 1) {
                            acked.countDown();
                        }
                    }

                    @Override
                    public void onError(Throwable t) {
                    }

                    @Override
                    public void onCompleted() {
                    }
                });
                out.onNext(FlowUpdate.newBuilder().setFlow(flow).setSeq(1).setNode("n1").build());
                assertThat(acked.await(20, TimeUnit.SECONDS)).isTrue();
                out.onCompleted();
                assertThat(packets(ch)).isEqualTo(9);
                String metrics = get(health, "/actuator/prometheus").body();
                assertThat(metrics).contains("goldmane_aggr_received_flows_total{application=\"goldmane\"} 1.0",
                        "goldmane_aggr_dropped_flows_total{application=\"goldmane\",reason=\"too_old\"} 0.0",
                        "goldmane_aggr_duplicate_flows_total", "goldmane_aggr_num_unique_flows",
                        "goldmane_aggr_rollovers_total", "goldmane_query_latency_seconds",
                        "goldmane_num_streams", "goldmane_collector_num_clients");
                assertThat(GoldmaneCalicoMetrics.TABLE.problemsIn(metrics)).as("Calico's names, types, labels").isEmpty();
                assertThat(java.nio.file.Files.readString(java.nio.file.Path.of("DESIGN.md")))
                        .as("DESIGN.md prints the table checked here").contains(GoldmaneCalicoMetrics.TABLE.markdown());
            } finally {
                ch.shutdownNow();
            }
        }
        // Graceful stop saved the open bucket: a restart (same bucket or later) has the flow.
        try (ConfigurableApplicationContext ctx = run()) {
            ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", ctx.getBean(GoldmaneDaemon.class).port())
                    .usePlaintext().build();
            try {
                assertThat(packets(ch)).isEqualTo(9);
            } finally {
                ch.shutdownNow();
            }
        }
    }

    @Test
    void badSettingsFailStartUpNamingTheVariable() {
        assertThatThrownBy(() -> new SpringApplicationBuilder(GoldmaneApplication.class).run("--server.port=0",
                "--calico.health.port=0", "--goldmane.aggregation-window=1500ms", "--goldmane.snapshot-enabled=false"))
                .hasStackTraceContaining("AGGREGATION_WINDOW");
        assertThatThrownBy(() -> new SpringApplicationBuilder(GoldmaneApplication.class).run("--server.port=0",
                "--calico.health.port=0", "--goldmane.retention=50s", "--goldmane.snapshot-enabled=false"))
                .hasStackTraceContaining("RETENTION");
        assertThatThrownBy(() -> new SpringApplicationBuilder(GoldmaneApplication.class).run("--server.port=0",
                "--calico.health.port=0", "--goldmane.server-cert-path=/x.crt", "--goldmane.snapshot-enabled=false"))
                .hasStackTraceContaining("SERVER_KEY_PATH");
        assertThatThrownBy(() -> new SpringApplicationBuilder(GoldmaneApplication.class).run("--server.port=0",
                "--calico.health.port=0", "--goldmane.push-url=ftp://x", "--goldmane.snapshot-enabled=false"))
                .hasStackTraceContaining("PUSH_URL");
    }
}
