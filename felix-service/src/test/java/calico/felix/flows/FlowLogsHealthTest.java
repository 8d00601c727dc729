package calico.felix.flows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.dataplane.testing.NetNs;
import calico.felix.calc.DataplaneUpdate;
import calico.libcalico.health.HealthAggregator;
import calico.libcalico.health.ReporterStatus;
import calico.libcalico.health.Verdict;
import calico.libcalico.testing.Await;
import calico.felix.calc.FelixSettings;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.ServerSocket;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Flow logs' own health: the {@code FlowLogs} reporter's detail and the Prometheus gauges show a
 * goldmane that cannot be reached (and its recovery) while felix stays live and readiness is not
 * touched. Real NFLOG and conntrack sockets in a namespace of its own ({@code f6-fl-*}), a real
 * goldmane in process.
 */
class FlowLogsHealthTest {

    static <T> void await(String what, Supplier<T> seen, Predicate<T> done) {
        Await.until(what, Duration.ofSeconds(20), seen::get, done);
    }

    static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @Test
    void anUnreachableGoldmaneShowsInHealthDetailAndMetricsNeverInTheProbes() throws Exception {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        HealthAggregator health = new HealthAggregator();
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        int port = freePort();
        try (NetNs ns = NetNs.create("f6-fl");
             FlowLogs flowLogs = new FlowLogs("node-a", ns.name(), null, new calico.felix.dataplane.rules.DataplaneModel(),
                     Clock.systemUTC(), meters, health)) {
            Supplier<ReporterStatus> status = () -> health.status("FlowLogs").orElseThrow();
            Supplier<Double> reachable = () -> meters.get("felix_flowlogs_goldmane_reachable").gauge().value();
            assertThat(status.get().detail()).isEqualTo("off");
            assertThat(status.get().readiness()).isEqualTo(Verdict.NOT_APPLICABLE);

            flowLogs.apply(List.of(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(Map.of(
                    "flowLogsGoldmaneServer", "127.0.0.1:" + port, "flowLogsFlushInterval", "200ms")))));
            Supplier<String> detail = () -> status.get().detail();
            await("the outage in the detail", detail, d -> d.contains("unreachable"));
            assertThat(status.get().detail()).startsWith("sending to goldmane at 127.0.0.1:" + port)
                    .contains("goldmane 127.0.0.1:" + port + " unreachable");
            assertThat(reachable.get()).isZero();
            assertThat(health.summary().live()).as("flow logs never fail liveness").isTrue();
            assertThat(health.summary().ready()).as("nor readiness").isTrue();

            try (InProcessGoldmane goldmane = new InProcessGoldmane(port, null)) {
                await("recovered", detail, d -> d.endsWith("; healthy"));
                await("the gauge follows", reachable, v -> v == 1.0);
                assertThat(meters.get("felix_flowlogs_nflog_overruns").gauge().value()).isZero();
                assertThat(meters.get("felix_flowlogs_conntrack_malformed").gauge().value()).isZero();
                assertThat(meters.get("felix_flowlogs_flush_errors").gauge().value()).isZero();
            }
            await("down again", detail, d -> d.contains("unreachable"));
            // The detail follows the channel's state, which can turn before the stream's onError counts
            // the error: wait for the count (it must still come), do not race it.
            await("the stream error counted", () -> meters.get("felix_flowlogs_goldmane_stream_errors").gauge().value(),
                    v -> v > 0);

            flowLogs.apply(List.of(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(Map.of()))));
            await("off", detail, d -> d.equals("off"));
            assertThat(reachable.get()).isZero();
        }
    }
}
