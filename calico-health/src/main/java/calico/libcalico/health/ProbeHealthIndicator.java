package calico.libcalico.health;

import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

/**
 * Actuator's view of one probe of a {@link HealthAggregator}: UP when the probe passes, else
 * DOWN (liveness) or OUT_OF_SERVICE (readiness); both map to HTTP 503. The details list every
 * reporter that declared this probe, with its verdict, detail, timeout and last report time.
 */
final class ProbeHealthIndicator implements HealthIndicator {

    private final HealthAggregator aggregator;
    private final Probe probe;

    ProbeHealthIndicator(HealthAggregator aggregator, Probe probe) {
        this.aggregator = aggregator;
        this.probe = probe;
    }

    @Override
    public Health health() {
        HealthSummary summary = aggregator.summary();
        Map<String, Object> reporters = new LinkedHashMap<>();
        for (ReporterStatus status : summary.reporters()) {
            if (status.reports(probe)) {
                reporters.put(status.name(), describe(status));
            }
        }
        Status status = summary.healthy(probe) ? Status.UP : probe == Probe.LIVENESS ? Status.DOWN : Status.OUT_OF_SERVICE;
        return Health.status(status).withDetail("reporters", reporters).build();
    }

    private Map<String, Object> describe(ReporterStatus status) {
        Verdict verdict = status.verdict(probe);
        Map<String, Object> json = new LinkedHashMap<>();
        json.put(probe.adjective(), verdict.healthy());
        json.put("state", verdict.text());
        json.put("detail", status.detail());
        json.put("timeout", status.timeout().isZero() ? "none" : status.timeout().toString());
        json.put("lastReport", status.lastReport() == null ? "never" : status.lastReport().toString());
        return json;
    }
}
