package calico.felix.app;

import calico.felix.calc.DataplaneUpdate;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.kubernetes.DatastoreMetrics;
import calico.libcalico.typha.TyphaClient;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Felix's Prometheus meters: {@code felix_apply_seconds} (histogram, one sample per batch),
 * {@code felix_updates_applied_total{type}}, {@code felix_ipsets}, {@code felix_ipset_members},
 * {@code felix_active_policies}, {@code felix_local_endpoints}, {@code felix_resyncs_total},
 * {@code felix_dataplane_errors}; through typha, {@code felix_typha_connected} (1 or 0),
 * {@code felix_typha_connection_attempts_total} and {@code felix_typha_disconnected_seconds} (0 while
 * connected). Gauges read the model, or the typha client, at scrape time.
 */
public final class FelixMetrics {

    private final MeterRegistry registry;
    private final Timer applyTimer;
    private final Counter resyncs;
    private final Map<Class<?>, Counter> byType = new ConcurrentHashMap<>();
    private volatile Supplier<Optional<TyphaClient.ConnectionStats>> typhaConnection = Optional::empty;

    public FelixMetrics(MeterRegistry registry, DataplaneModel model) {
        this.registry = registry;
        this.applyTimer = Timer.builder("felix.apply").description("Time to apply one batch to the dataplane")
                .publishPercentileHistogram().register(registry);
        this.resyncs = Counter.builder("felix.resyncs").description("Datastore resyncs started").register(registry);
        Gauge.builder("felix.ipsets", model, DataplaneModel::ipSetCount).description("IP sets programmed")
                .register(registry);
        Gauge.builder("felix.ipset.members", model, DataplaneModel::ipSetMemberCount)
                .description("Members over all IP sets").register(registry);
        Gauge.builder("felix.active.policies", model, DataplaneModel::policyCount)
                .description("Policies selecting a local endpoint").register(registry);
        Gauge.builder("felix.local.endpoints", model, DataplaneModel::endpointCount)
                .description("Local workload and host endpoints").register(registry);
        Gauge.builder("felix.config.unsupported.fields", model, m -> m.config().unsupportedSettings().size())
                .description("FelixConfiguration fields set away from their default that felix does not act on")
                .register(registry);
        Gauge.builder("felix.dataplane.errors", model, DataplaneModel::violations)
                .description("Protocol violations the dataplane rejected").register(registry);
    }

    void recordApply(List<DataplaneUpdate> batch, Duration took) {
        applyTimer.record(took);
        for (DataplaneUpdate u : batch) {
            byType.computeIfAbsent(u.getClass(), c -> Counter.builder("felix.updates.applied")
                    .description("Dataplane updates applied, by type").tag("type", c.getSimpleName())
                    .register(registry)).increment();
        }
    }

    void recordResync() {
        resyncs.increment();
    }

    /**
     * Exports the typha connection's meters, read from {@code connection} at each scrape (empty: not through
     * typha). The meters hold this object, not the supplier: Micrometer holds a meter's state weakly.
     */
    void bindTypha(Supplier<Optional<TyphaClient.ConnectionStats>> connection) {
        typhaConnection = connection;
        Gauge.builder("felix.typha.connected", this, m -> m.typha().map(t -> t.connected() ? 1.0 : 0.0).orElse(0.0))
                .description("Whether felix's typha stream is connected").register(registry);
        FunctionCounter.builder("felix.typha.connection.attempts", this,
                        m -> m.typha().map(t -> (double) t.attempts()).orElse(0.0))
                .description("Typha streams opened, the first connection included").register(registry);
        Gauge.builder("felix.typha.disconnected.seconds", this,
                        m -> m.typha().map(t -> t.disconnectedFor().toNanos() / 1e9).orElse(0.0))
                .description("How long felix has not heard from typha; 0 while connected").register(registry);
    }

    private Optional<TyphaClient.ConnectionStats> typha() {
        return typhaConnection.get();
    }

    /** Exports the datastore's own meters (calico_datastore_invalid_objects_total on the kubernetes datastore). */
    void bindDatastore(Datastore datastore) {
        new DatastoreMetrics(datastore).bindTo(registry);
    }
}
