package calico.felix.app;

import calico.api.k8s.KubernetesConverter;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.felix.calc.CalculationGraph;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.dataplane.Dataplane;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.config.DatastoreConfig;
import calico.libcalico.datastore.config.DatastoreProperties;
import calico.libcalico.health.HealthAggregator;
import calico.libcalico.health.HealthReporter;
import calico.libcalico.syncer.SyncerCallbacks;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import calico.libcalico.syncer.WatcherSyncer;
import calico.libcalico.typha.SyncerType;
import calico.libcalico.typha.TyphaClient;
import calico.libcalico.typha.TyphaDiscovery;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Felix's main loop, which owns its threads ({@link FelixApplication} starts and stops it):
 *
 * <ol>
 *   <li>{@code felix-startup} opens the datastore and starts a {@link WatcherSyncer} over every
 *       kind (or, with FELIX_TYPHAADDR, a {@link TyphaClient}); either stream passes the one
 *       {@link DatastoreReadyGate}, which holds it until ClusterInformation {@code default} has
 *       {@code spec.datastoreReady: true}, as Calico's felix waits for it;</li>
 *   <li>then the stream feeds the {@link CalculationGraph} on the syncer's callback thread, and
 *       each flushed batch goes to the {@link Dataplane} on that same thread (so batches are
 *       applied strictly in order);</li>
 *   <li>{@code felix-health} re-reports the graph and dataplane every heartbeat, failing them
 *       when a batch has been running longer than {@code felix.apply-timeout}; their reporters
 *       time out if this thread itself stops.</li>
 *   <li>read directly from the datastore, {@code felix-datastore-probe} asks it for its current
 *       revision every third of {@code felix.datastore-timeout} (at most every 10 s), and
 *       {@code DatastoreConnection} is not ready while the last answer is older than that timeout:
 *       a lost datastore shows even though its watches stay quiet (a dead API server and an idle one
 *       look alike to a watch). Nothing else changes: the syncer keeps what it has, so does the
 *       kernel.</li>
 * </ol>
 *
 * {@link #start()} returns at once; {@link #stop()} closes the syncer and the datastore.
 */
public class FelixDaemon {

    private static final Logger log = LoggerFactory.getLogger(FelixDaemon.class);
    static final ResourceKey CLUSTER_INFO = ResourceKey.of(ResourceKind.CLUSTER_INFORMATION, "default");

    private final FelixProperties properties;
    private final DatastoreProperties datastoreProperties;
    private final FelixTyphaProperties typha;
    private final FelixEnvironment environment;
    private final ProgrammedState state;
    private final FelixMetrics metrics;
    private final Clock clock;
    private final HealthAggregator health;
    /** The health timeout overrides in force (env at start, then each ConfigUpdate's); on the syncer thread after start. */
    private volatile java.util.Map<String, Duration> healthOverrides = java.util.Map.of();
    private final HealthReporter startupHealth;
    private final HealthReporter datastoreHealth;
    private final HealthReporter graphHealth;
    private final HealthReporter dataplaneHealth;
    private final Duration heartbeat;

    /** nanoTime when the running graph batch started; 0 when idle. */
    private final AtomicLong graphBusySince = new AtomicLong();
    /** nanoTime when the running dataplane apply started; 0 when idle. */
    private final AtomicLong applyBusySince = new AtomicLong();
    private final AtomicReference<ApplyStatus> lastApply = new AtomicReference<>(ApplyStatus.none());
    private final AtomicReference<SyncerStatus> syncerStatus = new AtomicReference<>(SyncerStatus.WAIT_FOR_DATASTORE);
    /** Time spent applying batches, so that the graph's own time can leave it out (felix_calc_graph_update_time_seconds). */
    private final AtomicLong appliedNanos = new AtomicLong();
    /** nanoTime of the datastore's last answer to the probe; 0 while it is not probed (through typha). */
    private final AtomicLong datastoreAnsweredAt = new AtomicLong();
    private final Object datastoreReportLock = new Object();
    /** The probe's last failure, null after an answer. */
    private volatile String datastoreError;

    private volatile boolean running;
    /** Set once the graph has thrown; it stays not ready from then on. */
    private volatile String graphFailure;
    private Thread startupThread;
    private ScheduledExecutorService healthLoop;
    private ScheduledExecutorService datastoreProbe;
    private Datastore datastore;
    private WatcherSyncer syncer;
    /** Read by the health thread and the metrics' scrape; written under the lock. */
    private volatile TyphaClient typhaClient;
    /** Typha's addresses from Kubernetes (FELIX_TYPHAK8SSERVICENAME), or null. */
    private final TyphaDiscovery typhaDiscovery;

    /**
     * @param typhaDiscovery typha's addresses from its Kubernetes service when {@code typha} says so, else null
     */
    public FelixDaemon(FelixProperties properties, DatastoreProperties datastoreProperties,
                       FelixEnvironment environment, ProgrammedState state,
                       FelixMetrics metrics, HealthAggregator health, Clock clock,
                       FelixTyphaProperties typha, TyphaDiscovery typhaDiscovery) {
        this.properties = properties;
        this.datastoreProperties = datastoreProperties;
        this.typha = typha;
        this.typhaDiscovery = typhaDiscovery;
        this.environment = environment;
        this.state = state;
        this.metrics = metrics;
        metrics.bindSyncerStatus(syncerStatus::get);
        this.clock = clock;
        // A heartbeat well inside the apply timeout; reporters expire after three missed beats.
        this.heartbeat = min(properties.applyTimeout().dividedBy(4), Duration.ofSeconds(10));
        Duration expiry = heartbeat.multipliedBy(3);
        this.health = health;
        this.startupHealth = health.registerReporter("FelixStartup", true, true, null);
        this.datastoreHealth = health.registerReporter("DatastoreConnection", true, true, null);
        this.graphHealth = health.registerReporter("CalculationGraph", false, true, expiry);
        this.dataplaneHealth = health.registerReporter("Dataplane", false, true, expiry);
        overrideHealthTimeouts(environment.settings().healthTimeoutOverrides());
        startupHealth.report(true, false, "not started");
        datastoreHealth.report(true, false, "not connected");
        reportPipeline();
    }

    /** Starts the threads and returns at once. */
    public synchronized void start() {
        if (running) {
            return;
        }
        running = true;
        healthLoop = Executors.newSingleThreadScheduledExecutor(r -> daemonThread(r, "felix-health"));
        healthLoop.scheduleWithFixedDelay(this::reportPipeline, 0, heartbeat.toMillis(), TimeUnit.MILLISECONDS);
        startupThread = daemonThread(this::startUp, "felix-startup");
        startupThread.start();
    }

    private static Thread daemonThread(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    /**
     * With FELIX_TYPHAADDR: read through typha instead of the datastore. The client reconnects
     * with backoff and diffs each new snapshot against what the graph has, so a reconnect
     * reaches the graph (and the dataplane) only as the differences. As on the direct path,
     * nothing reaches the graph until ClusterInformation {@code default} says
     * {@code datastoreReady: true} (here seen in typha's stream: {@link DatastoreReadyGate}).
     */
    private void startThroughTypha() {
        List<String> addresses = typha.discovered() ? discoverTypha() : null;
        if (typha.discovered() && addresses == null) {
            return;
        }
        log.info("Felix starting for node {} through typha at {}", properties.hostname(),
                addresses == null ? typha.typhaAddr() : addresses);
        SyncerCallbacks pipeline = pipeline("through typha");
        synchronized (this) {
            if (!running) {
                return;
            }
            // Discovered replicas are read again whenever a reconnect has tried them all.
            // DatastoreConnection says "through typha at" (or "typha away") when the stream connects or ends,
            // not at the next periodic check (up to half checkEvery(), 5 s by default, later).
            typhaClient = new TyphaClient(addresses == null ? typha.options(properties.hostname())
                    : typha.options(properties.hostname(), addresses)
                            .withRediscovery(typhaDiscovery::addresses), pipeline, connection -> reportDatastore());
            typhaClient.start();
            metrics.bindTypha(this::typhaConnection);
            reportDatastoreEvery(checkEvery());
        }
    }

    /** {@return the typha connection now}, empty when felix does not read through typha (or has stopped). */
    Optional<TyphaClient.ConnectionStats> typhaConnection() {
        TyphaClient c = typhaClient;
        return c == null ? Optional.empty() : Optional.of(c.connectionStats());
    }

    /** How often the source's answers are checked: a third of the timeout, at most every 10 s. */
    private Duration checkEvery() {
        return min(properties.datastoreTimeout().dividedBy(3), Duration.ofSeconds(10));
    }

    /** Checks the source's health on the health thread, twice per {@code every}. Caller holds the lock. */
    private void reportDatastoreEvery(Duration every) {
        healthLoop.scheduleWithFixedDelay(this::reportDatastore, every.toMillis(), every.toMillis() / 2 + 1,
                TimeUnit.MILLISECONDS);
    }

    /**
     * FELIX_TYPHAK8SSERVICENAME: reads typha's endpoints until there is at least one (doubling
     * backoff, as the datastore wait); {@return them, this node's first}, or null once stopped.
     * The client reads them again each time a reconnect has tried them all, so a typha that moved
     * is found.
     */
    private List<String> discoverTypha() {
        TyphaDiscovery discovery = typhaDiscovery;
        if (discovery == null) {
            throw new IllegalStateException("felix.typha-k8s-service-name (FELIX_TYPHAK8SSERVICENAME) is set but no "
                    + "typha discovery is configured");
        }
        List<String> found = discovery.await(() -> running, properties.readyPollInitial(), properties.readyPollMax(),
                why -> {
                    log.warn("Typha discovery: {}", why);
                    startupHealth.report(true, false, "discovering typha from service " + discovery.describe() + ": "
                            + why);
                });
        if (found != null) {
            log.info("Typha discovered from service {}: {}", discovery.describe(), found);
        }
        return found;
    }

    /**
     * The one path from a stream to the dataplane, for the datastore's syncer and typha's stream
     * alike: the stream's status into {@code DatastoreConnection} (the connection's health, whether
     * or not the gate is open), everything through the {@link DatastoreReadyGate} (which reports
     * {@code FelixStartup}) into a new calculation graph.
     *
     * @param source where the stream comes from, for the health detail
     */
    private SyncerCallbacks pipeline(String source) {
        // Only the kubernetes datastore has Services (EndpointSlices) for rules' services matches;
        // through typha too, felix's FELIX_DATASTORETYPE names the datastore typha reads.
        CalculationGraph graph = CalculationGraph.create(properties.hostname(), environment.variables(),
                this::applyBatch, new KubernetesConverter(),
                datastoreProperties.type() == DatastoreConfig.Type.KUBERNETES);
        ClusterCounts counts = new ClusterCounts();
        metrics.bindCluster(counts);
        DatastoreReadyGate gate = new DatastoreReadyGate(graphCallbacks(graph, counts), startupHealth, source);
        return new SyncerCallbacks() {
            @Override
            public void onStatusUpdated(SyncerStatus status) {
                onSyncerStatus(status);
                gate.onStatusUpdated(status);
            }

            @Override
            public void onUpdates(List<Update> updates) {
                gate.onUpdates(updates);
            }
        };
    }

    /**
     * Everything into the graph, and the same updates into Calico's cluster counts. The graph's time
     * ({@code felix_calc_graph_update_time_seconds}) leaves out the dataplane applies it flushed on the way,
     * as Calico's graph hands its output to the dataplane on another goroutine.
     */
    private SyncerCallbacks graphCallbacks(CalculationGraph graph, ClusterCounts counts) {
        return new SyncerCallbacks() {
            @Override
            public void onStatusUpdated(SyncerStatus status) {
                runGraph(() -> graph.onStatus(status));
            }

            @Override
            public void onUpdates(List<Update> updates) {
                long start = System.nanoTime();
                long appliedBefore = appliedNanos.get();
                runGraph(() -> graph.onUpdates(updates));
                long graphNanos = System.nanoTime() - start - (appliedNanos.get() - appliedBefore);
                metrics.recordGraph(updates, Duration.ofNanos(Math.max(0, graphNanos)));
                counts.onUpdates(updates);
            }
        };
    }

    /**
     * Runs on {@code felix-startup}: opens the datastore (retried with a doubling backoff), starts
     * the syncer behind the ready gate, and probes the datastore from then on.
     */
    private void startUp() {
        if (typha.enabled()) {
            startThroughTypha();
            return;
        }
        log.info("Felix starting for node {} with datastore {}", properties.hostname(),
                datastoreProperties.datastoreType());
        startupHealth.report(true, false, "connecting to the datastore");
        Duration wait = properties.readyPollInitial();
        Datastore store = null;
        while (running && store == null) {
            try {
                store = datastoreProperties.toConfig().open();
            } catch (RuntimeException e) {
                log.warn("Datastore not reachable yet: {}", e.toString());
                datastoreHealth.report(true, false, "datastore error: " + e.getMessage());
                try {
                    Thread.sleep(wait.toMillis());
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    break;
                }
                wait = min(wait.multipliedBy(2), properties.readyPollMax());
            }
        }
        synchronized (this) {
            if (!running || store == null) {
                if (store != null) {
                    store.close();
                }
                return;
            }
            datastore = store;
            metrics.bindDatastore(store);
            syncer = new WatcherSyncer(store, SyncerType.FELIX.kindsOn(store), pipeline("from the datastore"));
            syncer.start();
            startDatastoreProbe(store);
        }
        log.info("Syncer started; waiting for the datastore to be ready");
    }

    private void onSyncerStatus(SyncerStatus status) {
        SyncerStatus previous = syncerStatus.getAndSet(status);
        if (status == SyncerStatus.RESYNC_IN_PROGRESS && previous != SyncerStatus.RESYNC_IN_PROGRESS) {
            metrics.recordResync();
        }
        reportDatastore();
    }

    /**
     * Probes the datastore on a thread of its own (a request to an unreachable server may block
     * for its client's whole retry budget) and checks the answer's age on the health thread, which
     * never blocks. Caller holds the lock.
     */
    private void startDatastoreProbe(Datastore store) {
        Duration every = checkEvery();
        datastoreAnsweredAt.set(System.nanoTime());
        datastoreProbe = Executors.newSingleThreadScheduledExecutor(r -> daemonThread(r, "felix-datastore-probe"));
        datastoreProbe.scheduleWithFixedDelay(() -> {
            try {
                store.currentRevision();
                datastoreAnsweredAt.set(System.nanoTime());
                if (datastoreError != null) {
                    log.info("Datastore answers again");
                }
                datastoreError = null;
            } catch (RuntimeException e) {
                if (datastoreError == null) {
                    log.warn("Datastore does not answer: {}", e.toString());
                }
                datastoreError = e.getMessage();
            }
            reportDatastore();
        }, every.toMillis(), every.toMillis(), TimeUnit.MILLISECONDS);
        reportDatastoreEvery(every);
    }

    /**
     * DatastoreConnection: ready once the stream has connected, and while its source answers: the
     * datastore's probe, or typha's stream (not ready once typha has been away longer than the timeout;
     * the dataplane is left as it is meanwhile).
     */
    private void reportDatastore() {
        synchronized (datastoreReportLock) { // the health loop, the syncer's and typha's callbacks: the latest state wins
            reportDatastoreNow();
        }
    }

    private void reportDatastoreNow() {
        SyncerStatus status = syncerStatus.get();
        long answeredAt = datastoreAnsweredAt.get();
        Duration timeout = properties.datastoreTimeout();
        Optional<TyphaClient.ConnectionStats> typhaNow = typhaConnection();
        if (typhaNow.isPresent() && typhaNow.get().disconnectedFor().compareTo(timeout) > 0) {
            TyphaClient.ConnectionStats t = typhaNow.get();
            datastoreHealth.report(true, false, "typha has been unreachable for " + t.disconnectedFor().toSeconds()
                    + " s (over " + timeout + "; " + t.attempts() + " connection attempts so far)");
        } else if (answeredAt != 0 && System.nanoTime() - answeredAt > timeout.toNanos()) {
            String error = datastoreError;
            datastoreHealth.report(true, false, "the datastore has not answered for over " + timeout
                    + (error == null ? "" : ": " + error));
        } else {
            datastoreHealth.report(true, status != SyncerStatus.WAIT_FOR_DATASTORE, "syncer " + status
                    + typhaNow.map(t -> t.connected() ? " through typha at " + t.address() : " (typha away)").orElse(""));
        }
    }

    private void runGraph(Runnable step) {
        graphBusySince.set(System.nanoTime());
        try {
            step.run();
        } catch (RuntimeException e) {
            // The graph must not throw; if it does, its state is suspect and only a restart
            // repairs it: stay not ready for good, keep the syncer thread alive.
            log.error("Calculation graph failed; felix needs a restart to resync", e);
            graphFailure = "graph failed: " + e;
        } finally {
            graphBusySince.set(0);
        }
        reportPipeline();
    }

    /** The graph's output: one flushed batch, on the syncer's thread. */
    private void applyBatch(List<DataplaneUpdate> batch) {
        if (batch.isEmpty()) {
            return;
        }
        for (DataplaneUpdate u : batch) {
            if (u instanceof DataplaneUpdate.ConfigUpdate c) {
                overrideHealthTimeouts(c.settings().healthTimeoutOverrides());
            }
        }
        long start = System.nanoTime();
        applyBusySince.set(start);
        try {
            state.apply(batch);
        } catch (RuntimeException e) {
            log.error("Dataplane failed to apply a batch of {} updates", batch.size(), e);
        } finally {
            applyBusySince.set(0);
        }
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        appliedNanos.addAndGet(took.toNanos());
        metrics.recordApply(batch, took);
        ApplyStatus previous = lastApply.get();
        lastApply.set(new ApplyStatus(clock.instant(), batch.size(), took, previous.batches() + 1,
                state.dataplane().inSync(), state.errors()));
    }

    /**
     * Calico's {@code healthTimeoutOverrides} (env > FelixConfiguration, resolved by the graph):
     * each named reporter's timeout replaced, zero meaning never; Calico's name of the dataplane
     * loop, {@code InternalDataplaneMainLoop}, is our {@code Dataplane}. A name no reporter has is
     * logged (a misspelt name does nothing).
     */
    private void overrideHealthTimeouts(java.util.Map<String, Duration> overrides) {
        if (overrides.equals(healthOverrides)) {
            return;
        }
        healthOverrides = overrides;
        java.util.Map<String, Duration> byReporter = new java.util.TreeMap<>();
        overrides.forEach((name, timeout) -> byReporter.put(CALICO_REPORTER_NAMES.getOrDefault(name, name), timeout));
        java.util.Set<String> unknown = health.overrideTimeouts(byReporter);
        if (!unknown.isEmpty()) {
            log.warn("healthTimeoutOverrides: no health reporter named {} (felix has {})", unknown,
                    health.summary().reporters().stream().map(r -> r.name()).toList());
        }
    }

    /** Calico's reporter names where ours differ. */
    private static final java.util.Map<String, String> CALICO_REPORTER_NAMES = java.util.Map.of(
            "InternalDataplaneMainLoop", "Dataplane");

    /** {@return the earlier of two nanoTime stamps, 0 meaning none} (the hand-over, the queued dataplane's own apply). */
    private static long earliest(long a, long b) {
        return a == 0 ? b : b == 0 ? a : a - b < 0 ? a : b;
    }

    /** Reports the graph's and the dataplane's readiness now (heartbeat, and after each batch). */
    private void reportPipeline() {
        long now = System.nanoTime();
        long graphSince = graphBusySince.get();
        long applySince = earliest(applyBusySince.get(), state.dataplane().applyRunningSince());
        boolean inSync = state.dataplane().inSync();
        if (graphFailure != null) {
            graphHealth.report(true, false, graphFailure);
        } else if (graphSince != 0 && now - graphSince > properties.applyTimeout().toNanos()) {
            graphHealth.report(true, false, "a batch has been running for over " + properties.applyTimeout());
        } else {
            graphHealth.report(true, inSync, inSync ? "in sync" : "waiting for the datastore snapshot");
        }
        List<String> errors = state.errors();
        if (applySince != 0 && now - applySince > properties.applyTimeout().toNanos()) {
            dataplaneHealth.report(true, false, "an apply has been running for over " + properties.applyTimeout());
        } else if (!errors.isEmpty()) {
            dataplaneHealth.report(true, false, errors.size() + " error(s), last: " + errors.get(errors.size() - 1));
        } else {
            dataplaneHealth.report(true, inSync, inSync ? "in sync" : "waiting for InSync");
        }
    }

    /** Stops the threads, the syncer or typha client and the datastore; idempotent. */
    public void stop() {
        Thread startup;
        synchronized (this) {
            if (!running) {
                return;
            }
            running = false;
            startup = startupThread;
        }
        startup.interrupt();
        try {
            startup.join(Duration.ofSeconds(10).toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (this) {
            if (syncer != null) {
                syncer.close();
                syncer = null;
            }
            if (typhaClient != null) {
                typhaClient.close();
                typhaClient = null;
            }
            if (datastoreProbe != null) {
                datastoreProbe.shutdownNow();
                datastoreProbe = null;
            }
            if (datastore != null) {
                datastore.close();
                datastore = null;
            }
            healthLoop.shutdownNow();
        }
        log.info("Felix stopped");
    }

    public boolean isRunning() {
        return running;
    }

    public ApplyStatus lastApply() {
        return lastApply.get();
    }

    public SyncerStatus syncerStatus() {
        return syncerStatus.get();
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }
}
