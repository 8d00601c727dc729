package calico.typha.server;

import calico.libcalico.datastore.Datastore;
import calico.libcalico.health.HealthAggregator;
import calico.libcalico.health.HealthReporter;
import calico.libcalico.syncer.SyncerOptions;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.WatcherSyncer;
import calico.libcalico.typha.SyncerType;
import io.grpc.Server;
import io.grpc.ServerCredentials;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.netty.NettyServerBuilder;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Typha: one {@link WatcherSyncer} per {@link SyncerType} over the datastore, each feeding a
 * {@link SnapshotCache}, served to clients over the {@code Typha.Sync} gRPC stream. Plain Java
 * (the Spring application wraps it), so tests run real servers on random ports.
 */
public final class TyphaServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(TyphaServer.class);

    private final Datastore datastore;
    private final ServerSettings settings;
    private final ServerCredentials credentials;
    private final ServerInterceptor identityCheck;
    private final Map<SyncerType, SnapshotCache> caches = new EnumMap<>(SyncerType.class);
    private final List<WatcherSyncer> syncers = new ArrayList<>();
    private final SyncService service;
    private final ScheduledExecutorService timer;
    private final ScheduledExecutorService sealer;
    private final EncodedMessages encoded = new EncodedMessages();
    /** At most one delta breadcrumb per this interval under load (see SnapshotCache). */
    static final java.time.Duration COALESCE = java.time.Duration.ofMillis(50);
    /** Longest a breadcrumb grows while the previous one is still being handed to clients. */
    static final java.time.Duration MAX_COALESCE = java.time.Duration.ofMillis(250);
    private final HealthReporter health;
    private Server server;

    public TyphaServer(Datastore datastore, ServerSettings settings, ServerCredentials credentials,
                       MeterRegistry meters, HealthAggregator health, String version) {
        this(datastore, settings, credentials, meters, health, version, null);
    }

    /**
     * @param credentials   TLS credentials ({@link TyphaTls#serverCredentials}), or null for plaintext
     * @param health        where readiness (all syncers in sync) is reported
     * @param identityCheck {@link TyphaTls#clientIdentityCheck}, or null
     */
    public TyphaServer(Datastore datastore, ServerSettings settings, ServerCredentials credentials,
                       MeterRegistry meters, HealthAggregator health, String version, ServerInterceptor identityCheck) {
        this.datastore = datastore;
        this.settings = settings;
        this.credentials = credentials;
        this.identityCheck = identityCheck;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "typha-timer"));
        this.sealer = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "typha-coalesce"));
        for (SyncerType t : SyncerType.values()) {
            caches.put(t, new SnapshotCache(t.wireName(), settings.maxDeltaLogUpdates(), settings.snapshotChunkBytes(),
                    settings.snapshotMaxAge().toNanos(), COALESCE.toNanos(), MAX_COALESCE.toNanos(), sealer, encoded));
        }
        this.service = new SyncService(caches, settings, version, TyphaMetrics.on(meters));
        this.health = health.registerReporter("SyncServer", true, true, null);
        this.health.report(true, false, "not started");
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    public synchronized void start() {
        if (server != null) {
            return;
        }
        for (SyncerType t : SyncerType.values()) {
            WatcherSyncer s = new WatcherSyncer(datastore, t.kindsOn(datastore), caches.get(t), SyncerOptions.defaults());
            syncers.add(s);
            s.start();
        }
        InetSocketAddress at = settings.host().isEmpty() ? new InetSocketAddress(settings.port())
                : new InetSocketAddress(settings.host(), settings.port());
        NettyServerBuilder b = credentials == null ? NettyServerBuilder.forAddress(at)
                : NettyServerBuilder.forAddress(at, credentials);
        // Handlers run on the connection's event loop (they never block), and so does each client's
        // drain (SyncService): a message handed to gRPC is written by the thread that framed it.
        b.directExecutor();
        var definition = service.definition(encoded);
        server = b.addService(identityCheck == null ? definition
                : ServerInterceptors.intercept(definition, identityCheck)).build();
        try {
            server.start();
        } catch (IOException e) {
            throw new UncheckedIOException("typha: cannot listen on " + at, e);
        }
        long ping = settings.pingInterval().toMillis();
        timer.scheduleWithFixedDelay(this::tick, Math.min(ping, 1000), Math.min(ping, 1000), TimeUnit.MILLISECONDS);
        scheduleRebalance();
        log.info("Typha listening on {} ({})", server.getPort(), credentials == null ? "plaintext" : "TLS");
        reportHealth();
    }

    /**
     * Sheds at most one surplus connection per {@link ServerSettings#rebalanceInterval()}
     * (TYPHA_CONNECTIONDROPINTERVALSECS), each wait lengthened by up to a tenth at random as
     * Calico's jittered ticker does, so that replicas started together do not shed in step.
     */
    private void scheduleRebalance() {
        long interval = settings.rebalanceInterval().toNanos();
        long delay = interval + java.util.concurrent.ThreadLocalRandom.current().nextLong(Math.max(1, interval / 10));
        try {
            timer.schedule(() -> {
                try {
                    service.rebalanceOnce();
                } catch (RuntimeException e) {
                    log.warn("typha rebalancing: {}", e.toString());
                }
                rebalanceRounds.incrementAndGet();
                scheduleRebalance();
            }, delay, TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // closing: the timer is gone
        }
    }

    private long lastPing;
    /** Rebalancing decisions taken (shed one or nothing): what shows a test that none is pending. */
    private final AtomicLong rebalanceRounds = new AtomicLong();

    /** {@return how many times this typha has decided whether to shed a connection} */
    long rebalanceRounds() {
        return rebalanceRounds.get();
    }

    private void tick() {
        try {
            long now = System.nanoTime();
            if (now - lastPing >= settings.pingInterval().toNanos()) {
                lastPing = now;
                service.tick();
            }
            service.nudgeWaiting();
            reportHealth();
        } catch (RuntimeException e) {
            log.warn("typha timer: {}", e.toString());
        }
    }

    private void reportHealth() {
        List<String> waiting = new ArrayList<>();
        caches.forEach((t, c) -> {
            if (c.status() != SyncerStatus.IN_SYNC) {
                waiting.add(t.wireName());
            }
        });
        health.report(true, waiting.isEmpty(), waiting.isEmpty() ? "" : "syncers not in sync: " + waiting);
    }

    /** {@return the port clients connect to} */
    public int port() {
        return server.getPort();
    }

    /**
     * Replaces the fixed {@link ServerSettings#rebalanceTarget()} with a live one (read on the
     * timer thread each rebalancing interval, so it must answer at once from a cached value).
     */
    public void rebalanceTarget(java.util.function.IntSupplier target) {
        service.rebalanceTarget(target);
    }

    public int connectionCount() {
        return service.connectionCount();
    }

    /** {@return the sequence (breadcrumbs produced) of one syncer's cache} */
    public long sequence(SyncerType type) {
        return caches.get(type).sequence();
    }

    public SyncerStatus status(SyncerType type) {
        return caches.get(type).status();
    }

    @Override
    public synchronized void close() {
        if (server == null) {
            return;
        }
        timer.shutdownNow();
        service.closeAll(Status.UNAVAILABLE.withDescription("typha is shutting down"));
        syncers.forEach(WatcherSyncer::stop);
        server.shutdown();
        try {
            if (!server.awaitTermination(5, TimeUnit.SECONDS)) {
                server.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            server.shutdownNow();
        }
        sealer.shutdownNow(); // no more seals waking clients
        health.report(false, false, "stopped");
    }
}
