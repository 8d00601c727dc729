package calico.felix.dataplane;

import calico.dataplane.iptables.IptablesBackend;
import calico.dataplane.netlink.LinkUpdate;
import calico.dataplane.netlink.NetNamespace;
import calico.dataplane.netlink.Netlink;
import calico.dataplane.netlink.Sysctls;
import calico.felix.app.Dataplane;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.FelixSettings;
import calico.felix.dataplane.routes.RouteManager;
import calico.felix.dataplane.rules.PolicyDriver;
import java.io.UncheckedIOException;
import java.nio.file.NoSuchFileException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kernel dataplane: a {@link PolicyDriver} (iptables or nftables, chosen from the effective
 * FelixConfiguration, see {@link BackendChoice}) and {@link RouteManager} (routes and interface
 * sysctls), driven from one dedicated thread. Netlink must be created and used on a single
 * thread, and that thread's network namespace is the one programmed: with a namespace name the
 * thread first enters {@code /run/netns/<name>} and the iptables tools run under
 * {@code ip netns exec <name>}, so a containerised felix (or a test) programs that namespace and
 * never the process's own.
 *
 * <p>{@link #apply} queues the batch for the thread and returns; while the thread applies one
 * batch, later ones queue, and the next apply takes every queued batch, concatenated in order
 * (one render, one restore: catching up costs the fixed per-apply costs once, not once per
 * batch). The queue is bounded ({@value #MAX_QUEUED_UPDATES} updates): beyond it {@link #apply}
 * blocks, so the syncer still sees back-pressure. {@link #awaitApplied} waits for everything
 * handed over so far; {@link #status()}'s {@code lastApply} and {@code applies} say what is in
 * the kernel. Every batch is also folded into a {@link GraphReplay}: when a ConfigUpdate changes
 * the backend choice, the thread starts the new driver first and feeds it the replay's snapshot
 * (its first apply is a full resync), and only then removes the old driver's rules (keeping IP
 * sets both iptables drivers share: the new driver has already replaced them by swap), so the
 * namespace always has complete rules; routes are not touched. A write does not read the rules
 * back; {@value #SETTLE_MILLIS} ms after the last apply (and at every refresh) the driver reads
 * them back and checks them (see {@code IptablesDataplane.refresh}). Failures are never thrown: they are recorded (see {@link #errors()},
 * which lists only unresolved ones, and {@link #recentErrors()}) and the next batch starts with a
 * full resync. A periodic refresh on the same thread (every
 * {@code iptablesRefreshInterval}, default 180s) repairs drift. A {@link LinkMonitor} watches the
 * namespace's links so an endpoint's interface that appears or comes up is routed at once.
 */
public final class KernelDataplane implements Dataplane, AutoCloseable {

    /**
     * A point-in-time view for the admin API.
     *
     * @param applies       driver applies so far (each takes every batch queued behind the previous one)
     * @param queuedBatches batches handed to {@link #apply} and not yet applied (in the queue or in the running apply):
     *                      0 means the kernel has everything felix's graph has sent
     * @param batches       graph batches handed to {@link #apply} so far
     * @param applyTime     the dataplane thread's total time in applies (how busy it has been)
     */
    public record Status(String backend, String netns, KernelApplyStatus lastApply, PolicyDriver.Programmed programmed,
                         long applies, long queuedBatches, long batches, Duration applyTime, long resyncs, long refreshes, long repairs,
                         long backendRestarts, long failures, long linkUpdates, Set<String> pendingInterfaces,
                         Duration refreshInterval, boolean inSync, BackendSwitch lastBackendSwitch) {
    }

    /**
     * One run-time driver switch.
     *
     * @param unprotected the time the namespace had no complete policy rules: zero, since the new
     *                    driver's rules are complete before the old driver's go
     * @param took        from creating the new driver to the old one's rules removed
     */
    public record BackendSwitch(java.time.Instant at, String from, String to, Duration unprotected, Duration took) {
    }

    /** A failure and its number ({@link #failures} after it was counted). */
    private record Recorded(long seq, String text) {
    }

    private static final Logger log = LoggerFactory.getLogger(KernelDataplane.class);
    private static final Duration DEFAULT_REFRESH = Duration.ofSeconds(180);
    private static final int KEPT_ERRORS = 100;
    private static final PolicyDriver.Programmed NOTHING = new PolicyDriver.Programmed(0, 0, 0, 0);
    /**
     * Queued updates beyond which {@link #apply} blocks (back-pressure on the syncer) and a
     * gathering apply starts early. 10,000 made a 4,055-resource catch-up 134 applies; 50,000
     * makes it ~20 (PolicyScaleBench, design/e2e-tests.md).
     */
    static final int MAX_QUEUED_UPDATES = 50_000;
    /** Quiet time after an apply before the driver reads its rules back (a stranger's edit is adopted at most this long). */
    static final long SETTLE_MILLIS = 10_000;
    /** While catching up, the next apply gathers batches for twice the last apply's duration, at least this long... */
    static final Duration MIN_GATHER = Duration.ofMillis(500);
    /** ... and at most this long. */
    static final Duration MAX_GATHER = Duration.ofSeconds(2);
    /**
     * A gathering apply starts early once no batch has been handed over for this long: the
     * writes have stopped, and the last of them must not wait out the window. (25 ms was too
     * short: on a busy machine the graph's batches come in bursts with longer gaps.)
     */
    static final Duration QUIET = Duration.ofMillis(150);
    /**
     * A catch-up apply of at least this many updates, with batches queued behind it by the time
     * the driver asks, tells the driver more are coming ({@link PolicyDriver#apply(List, BooleanSupplier)}).
     */
    static final int MORE_COMING_MIN_UPDATES = 100;
    /** The driver holds rewrites back for at most this long while a catch-up streams on. */
    static final Duration MAX_HOLD = Duration.ofSeconds(4);

    private final String netns;
    private final PolicyDriverFactory factory;
    private final Supplier<IptablesBackend> detect;
    private final DataplaneObserver observer;
    private final Clock clock = Clock.systemUTC();
    private final ScheduledExecutorService thread;
    private final LinkMonitor links;

    // ---- Confined to {@link #thread}.
    private Netlink netlink;
    private Sysctls sysctls;
    private RouteManager routes;
    private PolicyDriver driver;
    private BackendChoice choice;
    /** The config inputs the current choice was resolved from; null before the first resolution. */
    private BackendChoice.Inputs choiceInputs;
    private final GraphReplay replay = new GraphReplay();
    private boolean needResync;
    private String forwardingApplied;
    private volatile Duration refreshInterval = DEFAULT_REFRESH; // written on the thread, read by status()
    private ScheduledFuture<?> refresh;
    private ScheduledFuture<?> settle;
    /** An old driver whose rules go once the new driver has applied successfully. */
    private PolicyDriver retiring;

    // ---- Guarded by {@link #queue}.
    private final Deque<List<DataplaneUpdate>> queue = new ArrayDeque<>();
    private int queuedUpdates;
    private boolean drainPosted;
    /** System.nanoTime() of the last {@link #apply} hand-over. */
    private long lastHandedOver;
    private long handedOver;
    private long applied;
    /** Whether the driver holds rewrites back ({@link PolicyDriver#heldBack()}): batches applied, but not all of them yet. */
    private boolean holding;
    private boolean closed;
    /**
     * System.nanoTime() until which the next apply gathers batches; 0 when it starts at once.
     * Set when batches queued during an apply (felix is catching up): the next apply waits for
     * more batches for twice as long as that apply took (at least {@link #MIN_GATHER}, at most
     * {@link #MAX_GATHER}), so a catch-up pays each apply's fixed cost (libnftables' cache, the
     * kernel's table validation, a restore of the whole table: all grow with the table, not with
     * the change) fewer times; but it starts as soon as no batch has been handed over for
     * {@link #QUIET} (the writes have stopped: the last one must not wait) or the queue is over
     * its bound. When nothing queued during an apply, the next change is applied at once.
     * Confined to {@link #thread}.
     */
    private long gatherUntil;
    /** System.nanoTime() of the first apply whose rewrites the driver still holds back; 0: none held. Confined to {@link #thread}. */
    private long holdingSince;

    // ---- Read by any thread.
    /** System.nanoTime() when the running apply started, 0 when none runs (felix's apply timeout). */
    private volatile long applyStartedAt;
    /** The last {@value #KEPT_ERRORS} failures, resolved or not, for the admin API. */
    private final Deque<String> recent = new ArrayDeque<>();
    /** Failures not yet followed by a fully successful apply or refresh: what makes felix not ready. */
    private final Deque<Recorded> unresolved = new ArrayDeque<>();
    /** Set while the configured backend cannot be started; cleared once a driver for the config starts. */
    private volatile String backendProblem;
    private final AtomicLong applies = new AtomicLong();
    private final AtomicLong applyNanos = new AtomicLong();
    private final AtomicLong resyncs = new AtomicLong();
    private final AtomicLong repairs = new AtomicLong();
    private final AtomicLong refreshes = new AtomicLong();
    private final AtomicLong restarts = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private final AtomicLong linkUpdates = new AtomicLong();
    private volatile String backend = "none";
    private volatile KernelApplyStatus lastApply;
    private volatile PolicyDriver.Programmed programmed = NOTHING;
    private volatile Set<String> pendingInterfaces = Set.of();
    private volatile boolean inSync;
    private volatile BackendSwitch lastSwitch;

    /** The standard drivers ({@link KernelPolicyDrivers}), no observer. */
    public KernelDataplane(String netns) {
        this(netns, new KernelPolicyDrivers(commandPrefix(netns)),
                DataplaneObserver.NONE);
    }

    /**
     * @param netns    network namespace name to program, empty or null for the process's own
     * @param factory  makes the policy driver for the configured backend (on the dataplane thread)
     * @param observer told about applies, refreshes, failures and backend starts (metrics)
     */
    public KernelDataplane(String netns, PolicyDriverFactory factory, DataplaneObserver observer) {
        this.netns = netns == null ? "" : netns.trim();
        this.factory = Objects.requireNonNull(factory, "factory");
        this.observer = Objects.requireNonNull(observer, "observer");
        List<String> prefix = commandPrefix(this.netns);
        this.detect = () -> IptablesBackend.detect(prefix);
        String threadName = this.netns.isEmpty() ? "felix-dataplane" : "felix-dataplane-" + this.netns;
        thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        });
        try {
            run(() -> {
                if (!this.netns.isEmpty()) {
                    NetNamespace.enterNamed(this.netns);
                }
                netlink = new Netlink();
                sysctls = new Sysctls();
                routes = new RouteManager(netlink, sysctls);
                scheduleRefresh(DEFAULT_REFRESH);
            });
        } catch (RuntimeException e) {
            thread.shutdownNow();
            throw new IllegalStateException("kernel dataplane (namespace "
                    + (this.netns.isEmpty() ? "own" : this.netns) + "): " + e.getMessage(), e);
        }
        links = new LinkMonitor(this.netns, new LinkMonitor.Listener() {
            @Override
            public void updates(List<LinkUpdate> updates) {
                post(() -> onLinksOnThread(updates), "link handling");
            }

            @Override
            public void lost() {
                post(() -> {
                    needResync = true;
                    routes.resync();
                }, "link handling");
            }

            @Override
            public void failed(String error) {
                record(error);
            }
        });
        log.info("Kernel dataplane in namespace {}; the policy backend follows FelixConfiguration",
                this.netns.isEmpty() ? "(own)" : this.netns);
    }

    /** {@return the command prefix that runs a tool in namespace {@code netns}} (empty for our own). */
    public static List<String> commandPrefix(String netns) {
        return netns == null || netns.isBlank() ? List.of() : List.of("ip", "netns", "exec", netns.trim());
    }

    /**
     * Queues the batch for the dataplane thread and returns; blocks first while more than
     * {@value #MAX_QUEUED_UPDATES} updates are queued. A batch carrying {@code InSync} is waited
     * for, so the caller's readiness report right after it sees {@link #inSync()} true. Never throws.
     */
    @Override
    public void apply(List<DataplaneUpdate> batch) {
        List<DataplaneUpdate> copy = List.copyOf(batch);
        boolean post;
        synchronized (queue) {
            try {
                while (queuedUpdates > MAX_QUEUED_UPDATES && !closed) {
                    queue.wait();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                record("apply of " + copy.size() + " updates: interrupted waiting for the dataplane thread");
                return;
            }
            if (closed) {
                return;
            }
            queue.addLast(copy);
            queuedUpdates += copy.size();
            handedOver++;
            lastHandedOver = System.nanoTime();
            post = !drainPosted;
            drainPosted = true;
        }
        if (post) {
            post(this::drainOnThread, "apply");
        }
        if (copy.stream().anyMatch(u -> u instanceof DataplaneUpdate.InSync)) {
            awaitApplied(Duration.ofDays(1));
        }
    }

    /**
     * Waits until every batch handed to {@link #apply} before this call is in the kernel (or
     * failed, see {@link #errors()}); {@return false} on timeout or when closed first.
     */
    public boolean awaitApplied(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (queue) {
            long target = handedOver;
            while (applied < target || holding) {
                long left = deadline - System.nanoTime();
                if (left <= 0 || closed) {
                    return false;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(queue, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
            return true;
        }
    }

    /** Takes every queued batch and applies them as one (after gathering, see {@link #gatherUntil}). */
    private void drainOnThread() {
        boolean catchingUp = gatherUntil != 0;
        if (catchingUp) {
            long now = System.nanoTime();
            long quietAt;
            boolean full;
            synchronized (queue) {
                quietAt = lastHandedOver + QUIET.toNanos();
                full = queuedUpdates > MAX_QUEUED_UPDATES;
            }
            long wait = Math.min(gatherUntil, quietAt) - now;
            if (wait > 0 && !full) {
                schedule(this::drainOnThread, wait); // drainPosted stays set: batches keep queueing for it
                return;
            }
        }
        List<List<DataplaneUpdate>> taken;
        synchronized (queue) {
            taken = new java.util.ArrayList<>(queue);
            queue.clear();
            queuedUpdates = 0;
            drainPosted = false;
            queue.notifyAll(); // room again for a blocked apply
        }
        try {
            List<DataplaneUpdate> all;
            if (taken.size() == 1) {
                all = taken.get(0);
            } else {
                all = new java.util.ArrayList<>();
                taken.forEach(all::addAll);
            }
            long start = System.nanoTime();
            applyStartedAt = start == 0 ? 1 : start;
            boolean mayHold = catchingUp && all.size() >= MORE_COMING_MIN_UPDATES
                    && (holdingSince == 0 || start - holdingSince < MAX_HOLD.toNanos());
            BooleanSupplier moreComing = () -> {
                if (!mayHold) {
                    return false;
                }
                synchronized (queue) {
                    return !queue.isEmpty(); // batches came while this one was being rendered
                }
            };
            try {
                applyOnThread(all, taken.size(), moreComing);
            } finally {
                applyStartedAt = 0;
                long end = System.nanoTime();
                applyNanos.addAndGet(end - start);
                boolean held = driver != null && driver.heldBack();
                holdingSince = !held ? 0 : holdingSince == 0 ? start : holdingSince;
                boolean more;
                boolean post = false;
                synchronized (queue) {
                    more = !queue.isEmpty();
                    holding = held;
                    if (held && !drainPosted) {
                        // What the driver held back goes once the stream stops: an apply (of
                        // nothing, if nothing else comes) after the gather below.
                        drainPosted = post = true;
                    }
                }
                long gather = Math.min(Math.max(2 * (end - start), MIN_GATHER.toNanos()), MAX_GATHER.toNanos());
                gatherUntil = more || held ? end + gather : 0;
                if (post) {
                    post(this::drainOnThread, "apply held-back rewrites");
                }
            }
        } finally {
            synchronized (queue) {
                applied += taken.size();
                queue.notifyAll();
            }
        }
    }

    private void applyOnThread(List<DataplaneUpdate> batch, int batches, BooleanSupplier moreComing) {
        long start = System.nanoTime();
        long failuresBefore = failures.get();
        replay.add(batch);
        Duration interval = refreshInterval;
        boolean sawInSync = false;
        for (DataplaneUpdate u : batch) {
            if (u instanceof DataplaneUpdate.ConfigUpdate c) {
                interval = refreshIntervalOf(c);
            } else if (u instanceof DataplaneUpdate.InSync) {
                sawInSync = true;
            }
        }
        ensureForwarding(replay.settings());
        boolean resync = needResync;
        needResync = true; // cleared only if both parts succeed
        PolicyDriver.ApplyStats stats = null;
        String error = null;
        try {
            stats = applyPolicy(batch, moreComing);
            routes.apply(batch);
            if (resync) {
                routes.resync();
            }
            needResync = false;
            resolvedUpTo(failuresBefore); // failures during this batch (e.g. a sysctl) stay unresolved
        } catch (RuntimeException e) {
            error = "batch of " + batch.size() + " updates failed, next batch resyncs: " + e;
            record(error);
        }
        if (driver != null) {
            programmed = driver.programmed();
        }
        pendingInterfaces = routes.pendingInterfaces();
        if (sawInSync) {
            inSync = true;
        }
        if (!interval.equals(refreshInterval)) {
            scheduleRefresh(interval);
        }
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        applies.incrementAndGet();
        if (stats != null && stats.resync()) {
            resyncs.incrementAndGet();
        }
        lastApply = new KernelApplyStatus(clock.instant(), took, batch.size(), batches, backend, stats, error);
        observer.applied(took, stats, programmed);
        scheduleSettle();
    }

    /** (Re)arms the read-back {@value #SETTLE_MILLIS} ms from now: it runs once applies stop. Runs on {@link #thread}. */
    private void scheduleSettle() {
        if (settle != null) {
            settle.cancel(false);
        }
        settle = thread.schedule(this::settleOnThread, SETTLE_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** The driver reads back what it wrote and repairs what a stranger changed meanwhile (no route work). */
    private void settleOnThread() {
        settle = null;
        if (driver == null) {
            return;
        }
        synchronized (queue) {
            if (!queue.isEmpty()) {
                return; // a change waits: it goes first, and its apply re-arms the read-back
            }
        }
        readBack(false);
    }

    /** Set while a driver read-back runs off the thread (its result is posted back). */
    private boolean readBackRunning;
    /** Periodic read-backs in a row found stale by a write in between; at {@value #MAX_STALE} the next runs here. */
    private int staleReadBacks;
    private static final int MAX_STALE = 3;

    /**
     * Starts the driver's read-back ({@link PolicyDriver#refreshLater}): the nftables driver
     * lists and compares on a thread of its own and only the repairs run here, so a change
     * arriving meanwhile is applied at once; the result is posted back to this thread.
     * {@code periodic}: the {@code iptablesRefreshInterval} refresh (routes too, counted in
     * {@code refreshes}); else the settle after the last apply. A stale periodic read-back is
     * tried again {@value #SETTLE_MILLIS} ms later; after {@value #MAX_STALE} stale ones in a
     * row (writes never stop) the refresh runs on this thread.
     */
    private void readBack(boolean periodic) {
        if (readBackRunning) {
            return;
        }
        if (periodic && staleReadBacks >= MAX_STALE) {
            staleReadBacks = 0;
            refreshHere();
            return;
        }
        PolicyDriver d = driver;
        long failuresBefore = failures.get();
        CompletableFuture<IntSupplier> started;
        try {
            started = d.refreshLater();
        } catch (RuntimeException e) {
            needResync = true;
            record("read-back failed, next batch resyncs: " + e);
            return;
        }
        readBackRunning = true;
        started.whenComplete((step, error) -> post(() -> finishReadBack(d, step, error, periodic, failuresBefore),
                "read-back"));
    }

    private void finishReadBack(PolicyDriver d, IntSupplier step, Throwable error, boolean periodic,
                                long failuresBefore) {
        readBackRunning = false;
        if (d != driver) {
            return; // the backend changed meanwhile
        }
        try {
            if (error != null) {
                Throwable cause = error instanceof CompletionException && error.getCause() != null
                        ? error.getCause() : error;
                throw cause instanceof RuntimeException re ? re : new IllegalStateException(cause);
            }
            int repaired = step.getAsInt();
            if (repaired < 0) {
                // A write came in between: its apply re-armed the settle; a periodic refresh tries
                // again a settle period later (at once would list a large table back to back while
                // changes keep coming, taking the CPU they need).
                if (periodic) {
                    staleReadBacks++;
                    schedule(() -> readBack(true), TimeUnit.MILLISECONDS.toNanos(SETTLE_MILLIS));
                }
                return;
            }
            if (periodic) {
                staleReadBacks = 0;
                finishRefresh(repaired, failuresBefore);
                return;
            }
            repairs.addAndGet(repaired);
            programmed = driver.programmed();
            if (repaired > 0) {
                log.warn("Dataplane read-back after the last apply repaired {} items", repaired);
                observer.refreshed(repaired, programmed);
            }
        } catch (RuntimeException e) {
            needResync = true;
            record((periodic ? "refresh" : "read-back after the last apply") + " failed, next batch resyncs: " + e);
        }
    }

    /**
     * Applies the batch with the driver the current config chooses, switching driver first when
     * the choice changed; {@return the driver's stats}, null when there is no driver.
     */
    private PolicyDriver.ApplyStats applyPolicy(List<DataplaneUpdate> batch, BooleanSupplier moreComing) {
        if (driver == null && !replay.hasConfig() && !replay.inSync()) {
            // The graph holds the configuration back until in sync: starting a driver now would
            // pick the default backend and program it, only to switch on the first ConfigUpdate.
            // The replay keeps the batch; the first driver starts from its snapshot.
            return null;
        }
        BackendChoice.Inputs inputs = BackendChoice.Inputs.of(replay.settings());
        if (!inputs.equals(choiceInputs)) {
            // Auto detection runs the save tools: if that throws, the next batch tries again.
            BackendChoice next = BackendChoice.resolve(inputs, detect);
            choiceInputs = inputs;
            if (next.equals(choice)) {
                backendProblem = null; // back to what runs, e.g. nftablesMode Enabled then Disabled again
            }
            if (driver == null || !next.equals(choice)) {
                PolicyDriver.ApplyStats started = start(next);
                if (started != null) {
                    return started;
                }
            }
        }
        if (driver == null) {
            return null;
        }
        PolicyDriver.ApplyStats stats = driver.apply(batch, moreComing);
        retireOld();
        return stats;
    }

    /**
     * Starts the driver for {@code next}, replacing the current one: the new driver is created
     * (if that fails the old one stays) and fed the whole state, and only when that succeeded do
     * the old driver's rules go: its chains and hook jumps only when both drivers use the same
     * kernel sets (iptables NFT and Legacy share ipsets, which the new driver has just replaced by
     * swap), everything it owns otherwise. Until then both rule sets are in place, each complete,
     * so no packet passes that policy denies. If the new driver's first apply fails, the old rules
     * stay until a later apply succeeds. {@return the first apply's stats}, null if the driver
     * could not be created.
     */
    private PolicyDriver.ApplyStats start(BackendChoice next) {
        PolicyDriver created;
        try {
            created = factory.create(next);
        } catch (RuntimeException e) {
            String problem = "cannot start the " + next.driverName() + " policy driver: " + e.getMessage()
                    + (driver == null ? "; no policy is programmed" : "; keeping " + driver.name());
            record(problem);
            backendProblem = problem; // stays until the configuration asks for a backend that starts
            return null;
        }
        backendProblem = null;
        PolicyDriver old = driver;
        boolean restart = old != null;
        long switchStart = System.nanoTime();
        if (restart) {
            log.warn("Policy backend changes from {} to {}: a full resync of the new one, then the old rules go",
                    old.name(), created.name());
            restarts.incrementAndGet();
            if (retiring == null) {
                retiring = old; // a still-retiring older driver stays first in line (its rules are older still)
            } else {
                retireLater.add(old);
            }
        }
        driver = created;
        choice = next;
        backend = created.name();
        programmed = NOTHING;
        observer.backendStarted(backend, restart);
        log.info("Policy backend: {}", backend);
        PolicyDriver.ApplyStats stats = created.apply(replay.snapshot());
        if (restart) {
            retireOld();
            Duration took = Duration.ofNanos(System.nanoTime() - switchStart);
            lastSwitch = new BackendSwitch(clock.instant(), old.name(), created.name(), Duration.ZERO, took);
            log.info("Policy backend {} in place after {} ms; the namespace had complete rules throughout", backend,
                    took.toMillis());
        }
        return stats;
    }

    /** Drivers replaced while an older one was still retiring. */
    private final List<PolicyDriver> retireLater = new java.util.ArrayList<>();

    /** Removes the rules of drivers replaced by the current one, now that it has applied successfully. */
    private void retireOld() {
        while (retiring != null) {
            PolicyDriver old = retiring;
            retiring = retireLater.isEmpty() ? null : retireLater.remove(0);
            try {
                if (old.name().equals(driver.name())) {
                    continue; // the same tables: the new driver's resync has already replaced the old one's chains
                }
                if (old.setKind().equals(driver.setKind())) {
                    old.removeRules();
                } else {
                    old.removeAll();
                }
            } catch (RuntimeException e) {
                record("removing the " + old.name() + " rules after a backend change failed: " + e);
            } finally {
                old.close();
            }
        }
    }

    /**
     * The global forwarding sysctls, as Calico's felix sets them at start when
     * {@code ipForwarding} is Enabled (the default): IPv4, and IPv6 when {@code ipv6Support}.
     * Re-done only when those two settings change. Failures are recorded, never thrown.
     */
    private void ensureForwarding(FelixSettings config) {
        boolean enabled = config.ipForwarding();
        boolean v6 = config.ipv6Support();
        String key = enabled + "/" + v6;
        if (key.equals(forwardingApplied)) {
            return;
        }
        forwardingApplied = key;
        if (!enabled) {
            log.info("ipForwarding is Disabled: leaving the forwarding sysctls untouched");
            return;
        }
        try {
            sysctls.write("net/ipv4/ip_forward", "1");
        } catch (RuntimeException e) {
            forwardingApplied = null; // retried with the next batch
            record("cannot enable IPv4 forwarding (net.ipv4.ip_forward): " + e.getMessage());
        }
        if (v6) {
            try {
                sysctls.write("net/ipv6/conf/all/forwarding", "1");
            } catch (UncheckedIOException e) {
                if (e.getCause() instanceof NoSuchFileException) {
                    log.warn("IPv6 is not available here; net.ipv6.conf.all.forwarding not set");
                } else {
                    forwardingApplied = null;
                    record("cannot enable IPv6 forwarding (net.ipv6.conf.all.forwarding): " + e.getMessage());
                }
            } catch (RuntimeException e) {
                forwardingApplied = null;
                record("cannot enable IPv6 forwarding (net.ipv6.conf.all.forwarding): " + e.getMessage());
            }
        }
    }

    private void onLinksOnThread(List<LinkUpdate> updates) {
        for (LinkUpdate u : updates) {
            linkUpdates.incrementAndGet();
            try {
                RouteManager.Stats st = routes.onLinkUpdate(u);
                if (st.routesAdded() > 0 || st.interfacesConfigured() > 0) {
                    log.info("Interface {} ({}): configured {}, {} route(s) added", u.name(),
                            u.deleted() ? "deleted" : u.up() ? "up" : "down", st.interfacesConfigured(),
                            st.routesAdded());
                }
            } catch (RuntimeException e) {
                record("link update " + u + ": " + e);
            }
        }
        pendingInterfaces = routes.pendingInterfaces();
    }

    private static Duration refreshIntervalOf(DataplaneUpdate.ConfigUpdate c) {
        Duration d = c.settings().iptablesRefreshInterval();
        return d.isNegative() || d.isZero() ? DEFAULT_REFRESH : d;
    }

    /** Runs on {@link #thread}. */
    private void scheduleRefresh(Duration interval) {
        if (refresh != null) {
            refresh.cancel(false);
        }
        refreshInterval = interval;
        long ms = interval.toMillis();
        refresh = thread.scheduleWithFixedDelay(this::refreshOnThread, ms, ms, TimeUnit.MILLISECONDS);
    }

    /** The periodic refresh: the driver's read-back off the thread, then routes (see {@link #readBack}). */
    private void refreshOnThread() {
        if (settle != null) {
            settle.cancel(false); // this refresh reads everything back
            settle = null;
        }
        if (driver == null) {
            refreshHere();
        } else {
            readBack(true);
        }
    }

    /** A whole refresh on this thread, waited for: {@link #refreshNow}, and when read-backs keep going stale. */
    private void refreshHere() {
        if (settle != null) {
            settle.cancel(false);
            settle = null;
        }
        long failuresBefore = failures.get();
        try {
            finishRefresh(driver == null ? 0 : driver.refresh(), failuresBefore);
        } catch (RuntimeException e) {
            needResync = true;
            record("refresh failed, next batch resyncs: " + e);
        }
    }

    /**
     * The rest of a refresh once the driver has repaired {@code driverRepaired} items (here or
     * off the thread): routes, counters, health (failures up to {@code failuresBefore} resolved).
     */
    private void finishRefresh(int driverRepaired, long failuresBefore) {
        RouteManager.Stats st = routes.resync();
        int repaired = driverRepaired + st.routesAdded() + st.routesDeleted();
        repairs.addAndGet(repaired);
        refreshes.incrementAndGet();
        if (driver != null) {
            programmed = driver.programmed();
        }
        pendingInterfaces = routes.pendingInterfaces();
        observer.refreshed(repaired, programmed);
        if (!needResync) {
            resolvedUpTo(failuresBefore);
        }
        if (repaired > 0) {
            log.warn("Dataplane refresh repaired {} items", repaired);
        }
    }

    /** Runs a refresh now, on the dataplane thread, and waits; {@return the items it repaired}. */
    public long refreshNow() {
        long before = repairs.get();
        run(this::refreshHere);
        return repairs.get() - before;
    }

    /** {@return the items periodic (or {@link #refreshNow}) refreshes have repaired since start}. */
    public long repairs() {
        return repairs.get();
    }

    /** {@return how many refreshes have completed}. */
    public long refreshes() {
        return refreshes.get();
    }

    /** {@return the refresh interval in force}. */
    public Duration refreshInterval() {
        return refreshInterval;
    }

    /** {@return the namespace programmed, empty for the process's own}. */
    public String netns() {
        return netns;
    }

    /** {@return the active policy driver's name} ({@code iptables-nft}, {@code iptables-legacy}, {@code nftables}), {@code none} before the first batch. */
    public String backend() {
        return backend;
    }

    /** {@return a point-in-time view} for the admin API. */
    public Status status() {
        long queued;
        long batches;
        synchronized (queue) {
            queued = handedOver - applied;
            batches = handedOver;
        }
        return new Status(backend, netns, lastApply, programmed, applies.get(), queued, batches,
                Duration.ofNanos(applyNanos.get()), resyncs.get(), refreshes.get(),
                repairs.get(), restarts.get(), failures.get(), linkUpdates.get(), pendingInterfaces, refreshInterval,
                inSync, lastSwitch);
    }

    @Override
    public boolean inSync() {
        return inSync;
    }

    @Override
    public long applyRunningSince() {
        return applyStartedAt;
    }

    /**
     * {@return the unresolved problems}: failures since the last fully successful apply or
     * refresh, and a configured backend that cannot be started; empty once the dataplane has
     * recovered (felix's readiness follows this).
     */
    @Override
    public synchronized List<String> errors() {
        String problem = backendProblem;
        List<String> out = new java.util.ArrayList<>();
        if (problem != null) {
            out.add(problem);
        }
        unresolved.stream().map(Recorded::text).filter(t -> !t.equals(problem)).forEach(out::add);
        return List.copyOf(out);
    }

    /** {@return the last failures, resolved or not}, oldest first. */
    public synchronized List<String> recentErrors() {
        return List.copyOf(recent);
    }

    private synchronized void resolvedUpTo(long seq) {
        unresolved.removeIf(r -> r.seq() <= seq);
    }

    private void record(String error) {
        log.error("Kernel dataplane: {}", error);
        synchronized (this) {
            long seq = failures.incrementAndGet();
            recent.addLast(error);
            unresolved.addLast(new Recorded(seq, error));
            if (recent.size() > KEPT_ERRORS) {
                recent.removeFirst();
            }
            if (unresolved.size() > KEPT_ERRORS) {
                unresolved.removeFirst();
            }
        }
        observer.failed(error);
    }

    /** Runs an apply on the dataplane thread after {@code delayNanos}. */
    private void schedule(Runnable body, long delayNanos) {
        try {
            thread.schedule(() -> {
                try {
                    body.run();
                } catch (RuntimeException e) {
                    record("apply: " + e);
                }
            }, delayNanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // Closing: nothing left to program.
        }
    }

    /** Queues work on the dataplane thread without waiting (applies, link announcements). */
    private void post(Runnable body, String what) {
        try {
            thread.execute(() -> {
                try {
                    body.run();
                } catch (RuntimeException e) {
                    record(what + ": " + e);
                }
            });
        } catch (RejectedExecutionException e) {
            // Closing: nothing left to program.
        }
    }

    private void run(Runnable body) {
        call(() -> {
            body.run();
            return null;
        });
    }

    private <T> T call(Callable<T> body) {
        try {
            return thread.submit(body).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted waiting for the dataplane thread", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException re) {
                throw re;
            }
            throw new IllegalStateException(cause);
        }
    }

    @Override
    public void close() {
        synchronized (queue) {
            closed = true;
            queue.notifyAll();
        }
        links.close();
        try {
            run(() -> {
                if (refresh != null) {
                    refresh.cancel(false);
                }
                if (driver != null) {
                    driver.close(); // our rules stay in the kernel, as when felix restarts
                }
                if (netlink != null) {
                    netlink.close();
                }
            });
        } catch (RuntimeException e) {
            log.warn("Closing the kernel dataplane: {}", e.getMessage());
        }
        // The thread may have changed namespace for good: it dies with this object.
        thread.shutdownNow();
    }
}
