package calico.confd.daemon;

import calico.libcalico.bird.BirdControl;
import calico.confd.bird.ConfigFile;
import calico.confd.model.BgpStore;
import calico.confd.model.BgpView;
import calico.api.model.BGPConfigurationSpec;
import calico.confd.render.BirdConfigBuilder;
import calico.confd.render.RenderException;
import calico.confd.render.Rendered;
import calico.libcalico.syncer.Backoff;
import calico.libcalico.syncer.SyncerCallbacks;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The reconcile loop: syncer updates mark the state dirty; one worker thread renders the
 * configuration, installs it only if {@code bird -p} accepts it, and then sends BIRD
 * {@code configure}. Updates arriving during a pass coalesce into one more pass. Nothing is
 * rendered before the syncer is in sync (a partial view would drop sessions).
 */
public final class ConfdDaemon implements SyncerCallbacks, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ConfdDaemon.class);
    /** The first retry of a failed reload; each next one waits twice as long, up to {@link #LAST_RELOAD_RETRY}. */
    static final Duration FIRST_RELOAD_RETRY = Duration.ofMillis(250);
    /** A retry is one connect to BIRD's socket: cheap enough to try every few seconds until BIRD runs. */
    static final Duration LAST_RELOAD_RETRY = Duration.ofSeconds(4);

    private final String nodeName;
    private final String routerId;
    private final BirdConfigBuilder builder;
    private final ConfigFile configFile;
    private final BirdControl bird;
    private final Duration resyncInterval;
    private final ScheduledExecutorService worker;
    private final AtomicBoolean queued = new AtomicBoolean();
    private final Object lock = new Object();
    private final BgpStore store;
    private volatile boolean inSync;
    private volatile boolean reloadPending;
    /** The waits between retries of a failed reload (worker thread only). */
    private final Backoff reloadRetry;
    private volatile ConfdStatus status = ConfdStatus.waiting();
    private volatile Consumer<ConfdStatus> listener = s -> { };
    private volatile Consumer<BGPConfigurationSpec> configurationListener = c -> { };

    /**
     * @param resyncInterval how often to render even without updates (password secrets change
     *                       outside the datastore), and to retry a failed reload
     */
    public ConfdDaemon(String nodeName, String routerId, BirdConfigBuilder builder, ConfigFile configFile,
                       BirdControl bird, Duration resyncInterval) {
        this.nodeName = nodeName;
        this.store = new BgpStore(nodeName);
        this.routerId = routerId;
        this.builder = builder;
        this.configFile = configFile;
        this.bird = bird;
        this.resyncInterval = resyncInterval;
        this.reloadRetry = new Backoff(FIRST_RELOAD_RETRY,
                LAST_RELOAD_RETRY.compareTo(resyncInterval) <= 0 ? LAST_RELOAD_RETRY : resyncInterval);
        this.worker = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "confd-render");
            t.setDaemon(true);
            return t;
        });
        long ms = Math.max(1, resyncInterval.toMillis());
        worker.scheduleWithFixedDelay(() -> {
            if (inSync) {
                pass();
            }
        }, ms, ms, TimeUnit.MILLISECONDS);
    }

    /** Called after every pass with its status (tests, metrics). */
    public void onStatus(Consumer<ConfdStatus> l) {
        this.listener = l;
    }

    /**
     * Called at every pass with the node's effective BGPConfiguration ({@code node.<name>} over {@code default}),
     * for what confd itself follows (its log level).
     */
    public void onConfiguration(Consumer<BGPConfigurationSpec> l) {
        this.configurationListener = l;
    }

    public ConfdStatus status() {
        return status;
    }

    public String nodeName() {
        return nodeName;
    }

    public BirdControl bird() {
        return bird;
    }

    @Override
    public void onStatusUpdated(SyncerStatus s) {
        if (s == SyncerStatus.IN_SYNC) {
            inSync = true;
            request();
        }
    }

    @Override
    public void onUpdates(List<Update> updates) {
        boolean changed;
        synchronized (lock) {
            changed = store.apply(updates);
        }
        if (changed && inSync) {
            request();
        }
    }

    /** The Kubernetes Services, all of them, whenever their watch changes (kubernetes datastore). */
    public void onServices(java.util.Map<String, calico.confd.model.ServiceInfo> services) {
        boolean changed;
        synchronized (lock) {
            changed = store.setServices(services);
        }
        if (changed && inSync) {
            request();
        }
    }

    /** Queues a pass unless one is already queued. */
    public void request() {
        if (queued.compareAndSet(false, true)) {
            worker.execute(() -> {
                queued.set(false);
                pass();
            });
        }
    }

    private void pass() {
        BgpView view;
        synchronized (lock) {
            view = store.view();
        }
        configurationListener.accept(BirdConfigBuilder.effectiveConfig(view, nodeName));
        ConfdStatus before = status;
        ConfdStatus next;
        try {
            Rendered r = builder.render(view, nodeName, routerId);
            ConfigFile.Outcome outcome = configFile.install(r.config());
            if (outcome instanceof ConfigFile.Rejected rej) {
                log.error("BIRD rejected the new configuration, keeping the last good one: {}", rej.reason());
                next = new ConfdStatus(before.generation(), ConfdStatus.Result.REJECTED,
                        "bird -p rejected the new configuration: " + rej.reason(), Instant.now(), before.sessions(),
                        r.skipped());
            } else {
                if (outcome instanceof ConfigFile.Installed) {
                    reloadPending = true;
                }
                next = reload(before, r);
            }
            if (!r.skipped().equals(before.skipped())) {
                r.skipped().forEach(s -> log.warn("skipped {}: {}", s.source(), s.reason()));
            }
        } catch (RenderException e) {
            if (!e.getMessage().equals(before.message())) {
                log.error("not rendering BIRD's configuration: {}", e.getMessage());
            }
            next = new ConfdStatus(before.generation(), ConfdStatus.Result.REFUSED, e.getMessage(), Instant.now(),
                    before.sessions(), before.skipped());
        } catch (RuntimeException e) {
            log.error("render pass failed", e);
            next = new ConfdStatus(before.generation(), ConfdStatus.Result.REFUSED, String.valueOf(e.getMessage()),
                    Instant.now(), before.sessions(), before.skipped());
        }
        status = next;
        if (next.result() == ConfdStatus.Result.RELOAD_FAILED) {
            retryReload();
        }
        listener.accept(next);
    }

    /**
     * A reload that failed is retried soon, not at the next resync: at start-up BIRD is started only
     * once the first configuration is installed (calico-node's order), so the first reload always
     * fails, and readiness waits for a reload that worked.
     */
    private void retryReload() {
        Duration wait = reloadRetry.next();
        if (!worker.isShutdown()) {
            worker.schedule(this::request, wait.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    private ConfdStatus reload(ConfdStatus before, Rendered r) {
        if (!reloadPending) {
            return new ConfdStatus(before.generation(), ConfdStatus.Result.UNCHANGED, null, Instant.now(),
                    r.sessions(), r.skipped());
        }
        try {
            bird.configure();
            reloadPending = false;
            reloadRetry.reset();
            log.info("BIRD reconfigured: {} sessions, {} skipped", r.sessions().size(), r.skipped().size());
            return new ConfdStatus(before.generation() + 1, ConfdStatus.Result.RELOADED, null, Instant.now(),
                    r.sessions(), r.skipped());
        } catch (IOException e) {
            // BIRD reads the installed file when it starts, so nothing is lost; retried on the next pass.
            log.warn("configuration installed but BIRD was not told: {}", e.getMessage());
            return new ConfdStatus(before.generation(), ConfdStatus.Result.RELOAD_FAILED,
                    "installed " + configFile.path() + " but could not reload BIRD at " + bird.socket() + ": "
                            + e.getMessage(), Instant.now(), r.sessions(), r.skipped());
        }
    }

    @Override
    public void close() {
        worker.shutdownNow();
        try {
            worker.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
