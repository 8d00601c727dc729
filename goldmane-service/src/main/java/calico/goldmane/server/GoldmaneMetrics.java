package calico.goldmane.server;

import calico.goldmane.engine.IngestStats;
import calico.libcalico.health.CalicoSummary;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;

/**
 * Goldmane's Prometheus meters, named as Calico's ({@code goldmane_aggr_*}, {@code
 * goldmane_collector_*}, {@code goldmane_*}). Labels are bounded sets (reason, method, result):
 * never a flow key or a node. {@link GoldmaneCalicoMetrics} maps Calico's names to these; Calico's
 * millisecond summaries ({@code goldmane_aggr_rollover_duration_ms}, {@code goldmane_aggr_backfill_latency_ms})
 * are served beside our second timers.
 */
public final class GoldmaneMetrics implements IngestStats {

    private final MeterRegistry registry;
    private final Counter received;
    private final Counter duplicate;
    private final Counter tooOld;
    private final Counter invalid;
    private final Counter queueFull;
    private final Counter rollovers;
    private final Timer rolloverDuration;
    private final DistributionSummary rolloverDurationMs;
    private final DistributionSummary backfillLatencyMs;
    private final DistributionSummary batchSize;
    private final AtomicInteger uniqueKeys = new AtomicInteger();
    private final AtomicInteger clients = new AtomicInteger();
    private final AtomicInteger streams = new AtomicInteger();
    private volatile Runnable heartbeat = () -> { };
    private volatile IntSupplier ingestQueue = () -> 0;

    public GoldmaneMetrics(MeterRegistry registry) {
        this.registry = registry;
        received = Counter.builder("goldmane_aggr_received_flows").description("flows received from collectors")
                .register(registry);
        duplicate = Counter.builder("goldmane_aggr_duplicate_flows")
                .description("replayed reports already counted (not counted again)").register(registry);
        tooOld = dropped("too_old");
        invalid = dropped("invalid");
        queueFull = dropped("queue_full");
        rollovers = Counter.builder("goldmane_aggr_rollovers").description("buckets opened (a clock jump opens several at once)").register(registry);
        rolloverDuration = Timer.builder("goldmane_aggr_rollover_duration")
                .description("writer time spent closing a bucket").register(registry);
        rolloverDurationMs = summary("goldmane_aggr_rollover_duration_ms", "writer time spent closing a bucket, ms");
        backfillLatencyMs = summary("goldmane_aggr_backfill_latency_ms", "time to backfill a new stream, ms");
        batchSize = summary("goldmane_aggr_flow_index_batch_size", "flows the writer took in one batch");
        Gauge.builder("goldmane_aggr_flow_index_buffer_size", this, m -> m.ingestQueue.getAsInt())
                .description("items waiting in the writer's ingest queue").register(registry);
        Gauge.builder("goldmane_aggr_num_unique_flows", uniqueKeys, AtomicInteger::get)
                .description("flow keys in the ring").register(registry);
        Gauge.builder("goldmane_collector_num_clients", clients, AtomicInteger::get)
                .description("connected collector streams").register(registry);
        Gauge.builder("goldmane_num_streams", streams, AtomicInteger::get)
                .description("open Flows.Stream subscriptions").register(registry);
        for (String m : new String[] {"list", "filter_hints", "statistics", "stream_backfill"}) {
            query(m);
        }
    }

    private DistributionSummary summary(String name, String description) {
        return CalicoSummary.builder(name, description).register(registry);
    }

    /** A stream's backfill took {@code nanos}: our query timer and Calico's millisecond summary. */
    void backfilled(long nanos) {
        query("stream_backfill").record(nanos, TimeUnit.NANOSECONDS);
        backfillLatencyMs.record(nanos / 1e6);
    }

    private Counter dropped(String reason) {
        return Counter.builder("goldmane_aggr_dropped_flows").tag("reason", reason)
                .description("flows not counted: too_old (before the replay horizon), invalid, queue_full")
                .register(registry);
    }

    /** {@return the latency timer of one query method} */
    public Timer query(String method) {
        return Timer.builder("goldmane_query_latency").tag("method", method)
                .description("from request to response").publishPercentiles(0.5, 0.99)
                .distributionStatisticExpiry(Duration.ofMinutes(2)).register(registry);
    }

    /** The ingest queue {@code goldmane_aggr_flow_index_buffer_size} reads (the aggregator is made after these meters). */
    public void bindIngestQueue(IntSupplier queued) {
        ingestQueue = queued;
    }

    public void onHeartbeat(Runnable r) {
        heartbeat = r;
    }

    @Override
    public void batch(int counted, int dup, int old, int bad) {
        received.increment(counted + dup + old + bad);
        batchSize.record(counted + dup + old + bad);
        if (dup > 0) {
            duplicate.increment(dup);
        }
        if (old > 0) {
            tooOld.increment(old);
        }
        if (bad > 0) {
            invalid.increment(bad);
        }
    }

    public void queueFull(int n) {
        received.increment(n);
        queueFull.increment(n);
    }

    @Override
    public void rollover(long nanos, int buckets) {
        rollovers.increment(buckets);
        rolloverDuration.record(nanos, TimeUnit.NANOSECONDS);
        rolloverDurationMs.record(nanos / 1e6);
    }

    @Override
    public void uniqueKeys(int n) {
        uniqueKeys.set(n);
    }

    @Override
    public void heartbeat() {
        heartbeat.run();
    }

    AtomicInteger clients() {
        return clients;
    }

    AtomicInteger streams() {
        return streams;
    }

    public void counter(String name, String tag, String value) {
        Counter.builder(name).tag(tag, value).register(registry).increment();
    }
}
