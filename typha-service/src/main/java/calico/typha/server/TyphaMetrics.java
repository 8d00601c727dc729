package calico.typha.server;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/** Typha's Prometheus meters: connections, snapshot size and age, fan-out latency, drops. */
final class TyphaMetrics {

    private final MeterRegistry registry;
    private final Timer fanoutLatency;
    private final Timer pingLatency;
    private final Counter accepted;

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
        this.accepted = Counter.builder("typha_connections_accepted").description("client streams accepted")
                .register(registry);
        this.fanoutLatency = Timer.builder("typha_fanout_latency")
                .description("from the syncer's delivery of a delta to its hand-off to one client's stream")
                .publishPercentiles(0.5, 0.99).publishPercentileHistogram(false)
                .distributionStatisticExpiry(Duration.ofMinutes(1))
                .register(registry);
        // Calico's name: each answered ping's round trip (a client that answers none is dropped).
        this.pingLatency = Timer.builder("typha_ping_latency").description("round trip of a ping to a client")
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

    void fanout(long createdNanos) {
        fanoutLatency.record(System.nanoTime() - createdNanos, TimeUnit.NANOSECONDS);
    }

    void pingAnswered(long sentNanos) {
        pingLatency.record(System.nanoTime() - sentNanos, TimeUnit.NANOSECONDS);
    }

    void dropped(String reason) {
        dropCounter(reason).increment();
    }
}
