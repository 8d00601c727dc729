package calico.felix.app;

import calico.api.model.ResourceKind;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.kubernetes.DatastoreMetrics;
import calico.libcalico.health.CalicoSummary;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import calico.libcalico.typha.TyphaClient;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
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
import java.util.function.ToDoubleFunction;
import java.util.function.ToIntFunction;

/**
 * Felix's Prometheus meters: {@code felix_apply_seconds} (histogram, one sample per batch),
 * {@code felix_updates_applied_total{type}}, {@code felix_ipsets}, {@code felix_ipset_members},
 * {@code felix_active_policies}, {@code felix_local_endpoints}, {@code felix_resyncs_total},
 * {@code felix_dataplane_errors}; through typha, {@code felix_typha_connected} (1 or 0),
 * {@code felix_typha_connection_attempts_total} and {@code felix_typha_disconnected_seconds} (0 while
 * connected). Gauges read the model, or the typha client, at scrape time.
 *
 * <p>Calico's names ({@link FelixCalicoMetrics}) are served beside these: {@code felix_active_local_*},
 * {@code felix_cluster_num_*} (from {@link ClusterCounts}), {@code felix_calc_graph_*},
 * {@code felix_int_dataplane_messages{type}}, {@code felix_int_dataplane_msg_batch_size},
 * {@code felix_resyncs_started} and {@code felix_resync_state}.
 */
public final class FelixMetrics {

    private final MeterRegistry registry;
    private final Timer applyTimer;
    private final Counter resyncs;
    private final Map<Class<?>, Counter> byType = new ConcurrentHashMap<>();
    private volatile Supplier<Optional<TyphaClient.ConnectionStats>> typhaConnection = Optional::empty;
    private final Counter resyncsStarted;
    private final Counter outputEvents;
    private final DistributionSummary graphUpdateTime;
    private final DistributionSummary msgBatchSize;
    private final Map<String, Counter> graphUpdatesByKind = new ConcurrentHashMap<>();
    private final Map<Class<?>, Counter> messagesByType = new ConcurrentHashMap<>();
    private volatile ClusterCounts cluster = new ClusterCounts();
    private volatile Supplier<SyncerStatus> syncerStatus = () -> null;

    public FelixMetrics(MeterRegistry registry, DataplaneModel model) {
        this.registry = registry;
        this.applyTimer = Timer.builder("felix.apply").description("Time to apply one batch to the dataplane")
                .publishPercentileHistogram().register(registry);
        this.resyncs = Counter.builder("felix.resyncs").description("Datastore resyncs started").register(registry);
        // Our names, and Calico's (FelixCalicoMetrics) for the same reading where it has one.
        modelGauge(registry, model, DataplaneModel::ipSetCount, "IP sets of active rules' selectors "
                + "(one per selector and named port)", "felix.ipsets", "felix_active_local_selectors");
        modelGauge(registry, model, DataplaneModel::ipSetMemberCount, "Members over all IP sets", "felix.ipset.members");
        modelGauge(registry, model, DataplaneModel::policyCount, "Policies selecting a local endpoint",
                "felix.active.policies", "felix_active_local_policies");
        modelGauge(registry, model, DataplaneModel::endpointCount, "Local workload and host endpoints",
                "felix.local.endpoints", "felix_active_local_endpoints");
        modelGauge(registry, model, m -> m.config().unsupportedSettings().size(), "FelixConfiguration fields set "
                + "away from their default that felix does not act on", "felix.config.unsupported.fields");
        modelGauge(registry, model, DataplaneModel::violations, "Protocol violations the dataplane rejected",
                "felix.dataplane.errors");
        resyncsStarted = Counter.builder("felix_resyncs_started").description("Datastore resyncs started")
                .register(registry);
        Gauge.builder("felix_resync_state", this, m -> resyncState(m.syncerStatus.get()))
                .description("Datastore state: 1 waiting for the datastore, 2 resyncing, 3 in sync (0 before any)")
                .register(registry);
        outputEvents = Counter.builder("felix_calc_graph_output_events")
                .description("Dataplane updates emitted by the calculation graph").register(registry);
        graphUpdateTime = summary(registry, "felix_calc_graph_update_time_seconds",
                "Seconds the calculation graph took for one delivery of datastore updates");
        msgBatchSize = summary(registry, "felix_int_dataplane_msg_batch_size", "Dataplane updates applied per batch");
        clusterGauge(registry, "felix_cluster_num_hosts", "Calico nodes in the cluster",
                c -> c.count(ResourceKind.NODE));
        clusterGauge(registry, "felix_cluster_num_workload_endpoints", "Workload endpoints cluster-wide",
                c -> c.count(ResourceKind.WORKLOAD_ENDPOINT));
        clusterGauge(registry, "felix_cluster_num_host_endpoints", "Host endpoints cluster-wide",
                c -> c.count(ResourceKind.HOST_ENDPOINT));
        clusterGauge(registry, "felix_cluster_num_policies", "Policies cluster-wide, every tier",
                ClusterCounts::policies);
        clusterGauge(registry, "felix_cluster_num_profiles", "Profiles cluster-wide",
                c -> c.count(ResourceKind.PROFILE));
        clusterGauge(registry, "felix_cluster_num_tiers", "Tiers cluster-wide", c -> c.count(ResourceKind.TIER));
    }

    /** One reading of the dataplane model, under each of {@code names}. */
    private static void modelGauge(MeterRegistry registry, DataplaneModel model,
                                   ToDoubleFunction<DataplaneModel> reading, String description,
                                   String... names) {
        for (String name : names) {
            Gauge.builder(name, model, reading).description(description).register(registry);
        }
    }

    private static DistributionSummary summary(MeterRegistry registry, String name, String description) {
        return CalicoSummary.builder(name, description).register(registry);
    }

    private void clusterGauge(MeterRegistry registry, String name, String description,
                              ToIntFunction<ClusterCounts> count) {
        Gauge.builder(name, this, m -> count.applyAsInt(m.cluster)).description(description).register(registry);
    }

    /** Calico's encoding of the datastore state in {@code felix_resync_state}. */
    private static double resyncState(SyncerStatus status) {
        if (status == null) {
            return 0;
        }
        return switch (status) {
            case WAIT_FOR_DATASTORE -> 1;
            case RESYNC_IN_PROGRESS -> 2;
            case IN_SYNC -> 3;
        };
    }

    /** The counts the {@code felix_cluster_num_*} gauges read: those of the current stream's graph. */
    void bindCluster(ClusterCounts counts) {
        cluster = counts;
    }

    /** The syncer status {@code felix_resync_state} reads. */
    void bindSyncerStatus(Supplier<SyncerStatus> status) {
        syncerStatus = status;
    }

    /** One delivery of datastore updates went through the calculation graph. */
    void recordGraph(List<Update> updates, Duration took) {
        graphUpdateTime.record(took.toNanos() / 1e9);
        for (Update u : updates) {
            graphUpdatesByKind.computeIfAbsent(u.key().kind().kind(), k -> Counter.builder(
                    "felix_calc_graph_updates_processed").description("Datastore updates processed by the calculation graph")
                    .tag("type", k).register(registry)).increment();
        }
    }

    void recordApply(List<DataplaneUpdate> batch, Duration took) {
        applyTimer.record(took);
        outputEvents.increment(batch.size());
        msgBatchSize.record(batch.size());
        for (DataplaneUpdate u : batch) {
            byType.computeIfAbsent(u.getClass(), c -> Counter.builder("felix.updates.applied")
                    .description("Dataplane updates applied, by type").tag("type", c.getSimpleName())
                    .register(registry)).increment();
            messagesByType.computeIfAbsent(u.getClass(), c -> Counter.builder("felix_int_dataplane_messages")
                    .description("Messages from the calculation graph to the dataplane, by type")
                    .tag("type", c.getSimpleName()).register(registry)).increment();
        }
    }

    void recordResync() {
        resyncs.increment();
        resyncsStarted.increment();
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
