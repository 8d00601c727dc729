package calico.libcalico.health;

import static calico.libcalico.health.CalicoMetric.Type.COUNTER;
import static calico.libcalico.health.CalicoMetric.Type.GAUGE;
import static calico.libcalico.health.CalicoMetric.Type.SUMMARY;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The table against a real Micrometer Prometheus registry's exposition. */
class CalicoMetricTableTest {

    private static final CalicoMetricTable TABLE = CalicoMetricTable.of(
            CalicoMetric.served("x_accepted", COUNTER, "", "accepted streams"),
            CalicoMetric.served("x_updates_total", COUNTER, "syncer", "updates"),
            CalicoMetric.served("x_active", GAUGE, "", "open streams"),
            CalicoMetric.served("x_latency", SUMMARY, "syncer", "round trips"),
            CalicoMetric.missing("x_log_errors", COUNTER, "", "logback counts no errors"));

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final AtomicInteger active = new AtomicInteger(3);

    private void registerAll() {
        Counter.builder("x_accepted").description("accepted").register(registry).increment(2);
        Counter.builder("x_updates").tag("syncer", "felix").register(registry).increment();
        Gauge.builder("x_active", active, AtomicInteger::get).register(registry);
        DistributionSummary.builder("x_latency").tag("syncer", "felix").publishPercentiles(0.5).register(registry)
                .record(0.25);
    }

    @Test
    void bareCountersLoseMicrometersTotalAndOthersKeepIt() {
        registerAll();
        String calico = TABLE.exposition(registry.scrape());
        assertThat(calico).contains("# TYPE x_accepted counter", "# HELP x_accepted accepted", "\nx_accepted 2.0")
                .doesNotContain("x_accepted_total")
                .contains("# TYPE x_updates_total counter", "x_updates_total{syncer=\"felix\"} 1.0");
        assertThat(TABLE.bareCounters()).containsExactly("x_accepted");
        assertThat(TABLE.problemsIn(calico)).isEmpty();
    }

    @Test
    void aScrapeWithoutAMetricItsTypeOrItsLabelsIsReported() {
        Counter.builder("x_accepted").register(registry);
        Gauge.builder("x_updates_total", active, AtomicInteger::get).register(registry); // Micrometer drops _total
        Gauge.builder("x_latency", active, AtomicInteger::get).register(registry);
        assertThat(TABLE.problemsIn(TABLE.exposition(registry.scrape()))).containsExactly(
                "x_updates_total: no # TYPE line",
                "x_active: no # TYPE line",
                "x_latency: # TYPE gauge, Calico's is summary",
                "x_latency: no sample with the labels [syncer], e.g. x_latency 3.0");
        // Micrometer's own exposition, unrenamed, has no x_accepted family
        assertThat(TABLE.problemsIn(registry.scrape())).contains("x_accepted: no # TYPE line");
    }

    @Test
    void theMarkdownHasOneRowPerCalicoMetricAndSaysWhyOneIsMissing() {
        assertThat(TABLE.markdown()).startsWith("| Calico metric | Type | Labels | Here |\n| --- | --- | --- | --- |\n")
                .contains("| `x_latency` | summary | `syncer` | round trips |\n")
                .contains("| `x_log_errors` | counter |  | **missing**: logback counts no errors |\n");
        assertThat(TABLE.markdown().lines()).hasSize(2 + 5);
    }

    @Test
    void aRowIsServedOrMissingNeverBothAndNamesAreUnique() {
        assertThatThrownBy(() -> new CalicoMetric("x", GAUGE, java.util.List.of(), "a", "b"))
                .hasMessageContaining("metric x: either served");
        assertThatThrownBy(() -> CalicoMetric.served("x-y", GAUGE, "", "a")).hasMessageContaining("x-y");
        assertThatThrownBy(() -> CalicoMetricTable.of(CalicoMetric.served("x", GAUGE, "", "a"),
                CalicoMetric.missing("x", GAUGE, "", "b"))).hasMessage("metric x is listed twice");
    }
}
