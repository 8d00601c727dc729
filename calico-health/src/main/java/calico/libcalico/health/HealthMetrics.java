package calico.libcalico.health;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * Exposes a {@link HealthAggregator} as gauges (1 healthy, 0 not), read at scrape time:
 * {@code calico_health_live}, {@code calico_health_ready}, and per reporter
 * {@code calico_health_reporter_live{reporter=...}} / {@code calico_health_reporter_ready{reporter=...}}
 * for the kinds it declared. Reporters registered after binding get their gauges when they register.
 */
public final class HealthMetrics implements MeterBinder {

    private final HealthAggregator aggregator;

    public HealthMetrics(HealthAggregator aggregator) {
        this.aggregator = aggregator;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        Gauge.builder("calico.health.live", aggregator, a -> a.summary().live() ? 1 : 0)
                .description("1 when every liveness reporter is live")
                .register(registry);
        Gauge.builder("calico.health.ready", aggregator, a -> a.summary().ready() ? 1 : 0)
                .description("1 when every readiness reporter is ready")
                .register(registry);
        aggregator.addRegistrationListener(status -> {
            for (Probe probe : Probe.values()) {
                if (status.reports(probe)) {
                    registerReporterGauge(registry, status.name(), probe);
                }
            }
        });
    }

    private void registerReporterGauge(MeterRegistry registry, String name, Probe probe) {
        Gauge.builder("calico.health.reporter." + probe.adjective(), aggregator,
                        a -> a.status(name).map(s -> s.verdict(probe).healthy() ? 1.0 : 0.0).orElse(Double.NaN))
                .tag("reporter", name)
                .description("1 when this reporter is " + probe.adjective())
                .register(registry);
    }
}
