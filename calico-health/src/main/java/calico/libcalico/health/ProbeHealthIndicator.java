package calico.libcalico.health;

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
        Status status = summary.healthy(probe) ? Status.UP : probe == Probe.LIVENESS ? Status.DOWN : Status.OUT_OF_SERVICE;
        return Health.status(status).withDetail("reporters", summary.reporterDetails(probe)).build();
    }
}
