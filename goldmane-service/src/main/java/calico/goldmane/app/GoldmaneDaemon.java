package calico.goldmane.app;

import calico.goldmane.engine.Aggregator;
import calico.goldmane.persist.SnapshotStore;
import calico.goldmane.query.Requests;
import calico.goldmane.server.GoldmaneMetrics;
import calico.goldmane.server.GoldmaneServer;
import calico.goldmane.server.GoldmaneTls;
import calico.goldmane.sink.NdjsonSink;
import calico.goldmane.store.Buckets;
import calico.goldmane.store.FlowStore;
import calico.goldmane.store.Window;
import calico.libcalico.health.HealthAggregator;
import calico.libcalico.health.HealthReporter;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Wires goldmane for the application's lifetime: restores the ring from disk, starts the writer,
 * the gRPC port, the snapshot store and the sink; at stop saves the open bucket and any closed
 * bucket changed by late flows since it was saved.
 */
@Component
public class GoldmaneDaemon implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(GoldmaneDaemon.class);

    private final GoldmaneProperties properties;
    private final MeterRegistry meters;
    private final HealthAggregator health;
    private final Clock clock;
    private Aggregator aggregator;
    private GoldmaneServer server;
    private SnapshotStore snapshots;
    private NdjsonSink sink;

    public GoldmaneDaemon(GoldmaneProperties properties, MeterRegistry meters, HealthAggregator health) {
        this.properties = properties;
        this.meters = meters;
        this.health = health;
        this.clock = Clock.systemUTC();
    }

    @Override
    public synchronized void start() {
        if (server != null) {
            return;
        }
        HealthReporter reporter = health.registerReporter("goldmane", true, true, Duration.ofSeconds(20));
        GoldmaneMetrics metrics = new GoldmaneMetrics(meters);
        Buckets buckets = properties.buckets();
        int head = buckets.index(clock.millis() / 1000);
        FlowStore store = new FlowStore(buckets, properties.maxIpsPerFlow(), head);
        if (properties.snapshotEnabled()) {
            snapshots = new SnapshotStore(properties.snapshotPath(), buckets.widthSeconds(), buckets.retained(),
                    (op, result) -> metrics.counter("goldmane_snapshot_operations", "result", op + "_" + result));
            var windows = snapshots.load(buckets.start(buckets.oldestRetained(head)));
            windows.forEach(store::restore);
            log.info("restored {} buckets ({} keys) from {}", windows.size(), store.uniqueKeys(),
                    properties.snapshotDir());
        }
        aggregator = new Aggregator(store, clock, properties.ingestQueueSize(), 2048, metrics);
        metrics.bindIngestQueue(aggregator::queued);
        if (snapshots != null) {
            aggregator.addListener(snapshots);
        }
        if (properties.pushUrl() != null) {
            sink = new NdjsonSink(URI.create(properties.pushUrl()), properties.clientCertPath(),
                    properties.clientKeyPath(), properties.caCertPath(), 3, Duration.ofSeconds(1),
                    result -> metrics.counter("goldmane_sink_pushes", "result", result));
            aggregator.addListener(sink);
        }
        var credentials = properties.tls() ? GoldmaneTls.serverCredentials(properties.serverCertPath(),
                properties.serverKeyPath(), properties.caCertPath()) : null;
        server = new GoldmaneServer(aggregator, new Requests(buckets, properties.maxPageSize()), clock, metrics,
                credentials, properties.host(), properties.port(), properties.ingestTimeout());
        metrics.onHeartbeat(() -> reporter.report(true, true));
        aggregator.start();
        reporter.report(true, true);
    }

    /** {@return the gRPC port in use} */
    public synchronized int port() {
        return server.port();
    }

    /** {@return the aggregator, for tests} */
    public synchronized Aggregator aggregator() {
        return aggregator;
    }

    @Override
    public synchronized void stop() {
        if (server == null) {
            return;
        }
        server.close();
        if (snapshots != null) {
            try {
                List<Window> unsaved = aggregator.call(FlowStore::unsaved).get(10, TimeUnit.SECONDS);
                snapshots.close();
                unsaved.forEach(snapshots::writeNow);
            } catch (Exception e) {
                log.warn("could not save the open bucket", e);
            }
        }
        aggregator.close();
        if (sink != null) {
            sink.close();
        }
        server = null;
    }

    @Override
    public synchronized boolean isRunning() {
        return server != null;
    }
}
