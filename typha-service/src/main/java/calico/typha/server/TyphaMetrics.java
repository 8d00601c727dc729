package calico.typha.server;

import calico.libcalico.health.CalicoSummary;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Typha's Prometheus meters: connections, snapshot size and age, fan-out latency, drops. Calico's names
 * ({@link TyphaCalicoMetrics}) sit beside our own older ones, which dashboards and tests still read.
 */
final class TyphaMetrics {

    private final MeterRegistry registry;
    private final Timer fanoutLatency;
    private final Counter accepted;
    private final Counter rebalanced;

    /** Binds the meters once the connection count exists. */
    interface Factory {
        TyphaMetrics create(Supplier<Number> connections);
    }

    static Factory on(MeterRegistry registry) {
        return connections -> new TyphaMetrics(registry, connections);
    }

    private TyphaMetrics(MeterRegistry registry, Supplier<Number> connections) {
        this.registry = registry;
        Gauge.builder("typha_connections", connections).description("open client streams").register(registry);
        Gauge.builder("typha_connections_active", connections)
                .description("open client streams, those still before their hello included").register(registry);
        this.rebalanced = Counter.builder("typha_connections_dropped")
                .description("client streams ended to rebalance load with other typha instances").register(registry);
        this.accepted = Counter.builder("typha_connections_accepted").description("client streams accepted")
                .register(registry);
        this.fanoutLatency = Timer.builder("typha_fanout_latency")
                .description("from the syncer's delivery of a delta to its hand-off to one client's stream")
                .publishPercentiles(0.5, 0.99).publishPercentileHistogram(false)
                .distributionStatisticExpiry(Duration.ofMinutes(1))
                .register(registry);
        for (String reason : REASONS) {
            dropCounter(reason);
        }
        for (String outcome : CATCH_UP_OUTCOMES) {
            catchUpCounter(outcome);
        }
    }

    /** How a snapshot that waited for this typha to reach a client's revisions ended. */
    static final java.util.List<String> CATCH_UP_OUTCOMES = java.util.List.of("caught-up", "timed-out");

    private Counter catchUpCounter(String outcome) {
        return Counter.builder("typha_snapshot_catchup_waits").tag("outcome", outcome)
                .description("client snapshots that waited for this typha to reach what the client had seen")
                .register(registry);
    }

    void caughtUp(boolean inTime) {
        catchUpCounter(inTime ? "caught-up" : "timed-out").increment();
    }

    /** Why typha ends a stream; every reason is registered up front so dashboards see zeros. */
    static final java.util.List<String> REASONS = java.util.List.of("fell-behind", "timeout", "protocol",
            "max-connections", "rebalance", "shutdown");

    private Counter dropCounter(String reason) {
        return Counter.builder("typha_clients_dropped").tag("reason", reason)
                .description("client streams ended by typha").register(registry);
    }

    void cache(SnapshotCache cache) {
        String syncer = cache.syncerType();
        Gauge.builder("typha_cache_size", cache, SnapshotCache::size).tag("syncer", syncer)
                .description("key/value pairs in this syncer's cache").register(registry);
        Gauge.builder("typha_breadcrumb_seq_number", cache, SnapshotCache::sequence).tag("syncer", syncer)
                .description("the latest breadcrumb's sequence number: deltas sealed so far").register(registry);
        Gauge.builder("typha_snapshot_raw_bytes", cache, SnapshotCache::latestSnapshotBytes).tag("syncer", syncer)
                .description("encoded size of the latest snapshot, before compression").register(registry);
        Gauge.builder("typha_connections_streaming", cache, SnapshotCache::clientCount).tag("syncer", syncer)
                .description("client streams past their hello on this syncer").register(registry);
        FunctionCounter.builder("typha_snapshots_generated", cache, SnapshotCache::snapshotsBuilt).tag("syncer", syncer)
                .description("snapshots built for new clients").register(registry);
        FunctionCounter.builder("typha_snapshots_reused", cache, SnapshotCache::snapshotsReused).tag("syncer", syncer)
                .description("new clients sent the latest snapshot again").register(registry);
        FunctionCounter.builder("typha_updates", cache, SnapshotCache::updatesReceived).tag("syncer", syncer)
                .description("updates received from the syncer").register(registry);
        pingLatency(syncer);
        clientLatency(syncer);
        snapshotSendTime(syncer);
        cache.onSealed(summary("typha_breadcrumb_size", syncer, "KVs in each sealed breadcrumb")::record);
        Gauge.builder("typha_snapshot_size", cache, SnapshotCache::size).tag("syncer_type", cache.syncerType())
                .description("resources in the current state").register(registry);
        Gauge.builder("typha_snapshot_age_seconds", cache, SnapshotCache::snapshotAgeSeconds)
                .tag("syncer_type", cache.syncerType()).description("age of the latest snapshot built")
                .register(registry);
        Gauge.builder("typha_snapshot_bytes", cache, SnapshotCache::latestSnapshotBytes)
                .tag("syncer_type", cache.syncerType()).description("encoded size of the latest snapshot")
                .register(registry);
        Gauge.builder("typha_sequence", cache, SnapshotCache::sequence).tag("syncer_type", cache.syncerType())
                .description("breadcrumbs produced").register(registry);
    }

    void accepted() {
        accepted.increment();
    }

    /** A breadcrumb handed to one client's stream: our fan-out timer and Calico's per-syncer client latency. */
    void fanout(String syncer, long createdNanos) {
        long took = System.nanoTime() - createdNanos;
        fanoutLatency.record(took, TimeUnit.NANOSECONDS);
        clientLatency(syncer).record(took / 1e9);
    }

    private DistributionSummary clientLatency(String syncer) {
        return summary("typha_client_latency_secs", syncer,
                "how far behind the latest breadcrumb a client was when handed one, in seconds");
    }

    /** A per-syncer summary under Calico's exact name. */
    private DistributionSummary summary(String name, String syncer, String description) {
        return CalicoSummary.builder(name, description).tag("syncer", syncer).register(registry);
    }

    /** Calico's name and type: a summary in seconds (a Micrometer timer would add {@code _seconds}), per syncer. */
    private DistributionSummary pingLatency(String syncer) {
        return summary("typha_ping_latency", syncer, "round trip of a ping to a client, in seconds");
    }

    private DistributionSummary snapshotSendTime(String syncer) {
        return summary("typha_client_snapshot_send_secs", syncer,
                "from taking a snapshot for a client to handing its last chunk to the client's stream, in seconds");
    }

    void snapshotSent(String syncer, long tookNanos) {
        snapshotSendTime(syncer).record(tookNanos / 1e9);
    }

    void pingAnswered(String syncer, long sentNanos) {
        pingLatency(syncer).record((System.nanoTime() - sentNanos) / 1e9);
    }

    void dropped(String reason) {
        dropCounter(reason).increment();
        if ("rebalance".equals(reason)) {
            rebalanced.increment();
        }
    }
}
