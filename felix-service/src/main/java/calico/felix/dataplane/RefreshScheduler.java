package calico.felix.dataplane;

import calico.felix.dataplane.routes.RouteManager;
import calico.felix.dataplane.rules.PolicyDriver;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Refresh and repair (kernel-dataplane.md invariants 9 and 10): a one-shot read-back {@value
 * #SETTLE_MILLIS} ms after the last apply (the <em>settle</em>), and a periodic refresh every
 * {@code iptablesRefreshInterval} (the driver's read-back, then routes). The driver's read-back
 * goes through {@link PolicyDriver#refreshLater()}, so its slow part may run off the dataplane
 * thread; only the repair runs on it. Confined to the dataplane thread, except {@link
 * #interval()}; reports into the {@link StatusBoard}.
 */
final class RefreshScheduler {

    /** The dataplane's logger: its lines read as before the split (operators filter on it). */
    private static final Logger log = LoggerFactory.getLogger(KernelDataplane.class);
    static final Duration DEFAULT_REFRESH = Duration.ofSeconds(180);
    /** Quiet time after an apply before the driver reads its rules back (a stranger's edit is adopted at most this long). */
    static final long SETTLE_MILLIS = 10_000;
    /** Periodic read-backs in a row found stale by a write in between, after which the next runs on the thread. */
    static final int MAX_STALE = 3;

    private final DataplaneThread thread;
    private final StatusBoard board;
    private final DataplaneObserver observer;
    private final RouteManager routes;
    /** Further route managers' resyncs ({@code RemoteRouteManager}), {@return items repaired}. */
    private final java.util.function.IntSupplier moreRoutes;
    private final Supplier<PolicyDriver> driver;
    private final ResyncNeeded resync;
    private final ApplyQueue queue;
    private final long settleMillis;
    private volatile Duration interval = DEFAULT_REFRESH; // written on the thread, read by status()
    private ScheduledFuture<?> refresh;
    private ScheduledFuture<?> settle;
    /** Set while a driver read-back runs off the thread (its result is posted back). */
    private boolean readBackRunning;
    private int staleReadBacks;

    /**
     * @param driver the current policy driver (null before the first)
     * @param queue  a settle that finds a batch waiting leaves the read-back to after it
     * @param settle the quiet time after an apply before the read-back, and between stale periodic read-backs
     *               ({@value #SETTLE_MILLIS} ms in felix; tests shorten it)
     */
    RefreshScheduler(DataplaneThread thread, StatusBoard board, DataplaneObserver observer, RouteManager routes,
                     Supplier<PolicyDriver> driver, ResyncNeeded resync, ApplyQueue queue, Duration settle) {
        this(thread, board, observer, routes, () -> 0, driver, resync, queue, settle);
    }

    /** @param moreRoutes resyncs the other route managers after {@code routes}, {@return items they repaired} */
    RefreshScheduler(DataplaneThread thread, StatusBoard board, DataplaneObserver observer, RouteManager routes,
                     java.util.function.IntSupplier moreRoutes, Supplier<PolicyDriver> driver, ResyncNeeded resync,
                     ApplyQueue queue, Duration settle) {
        this.moreRoutes = moreRoutes;
        this.thread = thread;
        this.board = board;
        this.observer = observer;
        this.routes = routes;
        this.driver = driver;
        this.resync = resync;
        this.queue = queue;
        this.settleMillis = settle.toMillis();
    }

    /** {@return the refresh interval in force} */
    Duration interval() {
        return interval;
    }

    /** Refreshes every {@code next} from now on, if that is not the interval in force already. */
    void every(Duration next) {
        if (refresh != null && next.equals(interval)) {
            return;
        }
        if (refresh != null) {
            refresh.cancel(false);
        }
        interval = next;
        refresh = thread.every(this::refreshOnThread, next.toMillis());
    }

    /** (Re)arms the read-back {@value #SETTLE_MILLIS} ms from now: it runs once applies stop. */
    void settleLater() {
        if (settle != null) {
            settle.cancel(false);
        }
        settle = thread.timer(this::settleOnThread, settleMillis);
    }

    /** Stops the periodic refresh (closing). */
    void stop() {
        if (refresh != null) {
            refresh.cancel(false);
        }
    }

    /** The periodic refresh: the driver's read-back off the thread, then routes (see {@link #readBack}). */
    private void refreshOnThread() {
        if (settle != null) {
            settle.cancel(false); // this refresh reads everything back
            settle = null;
        }
        if (driver.get() == null) {
            refreshHere();
        } else {
            readBack(true);
        }
    }

    /** A whole refresh on this thread, waited for: {@code refreshNow}, and when read-backs keep going stale. */
    void refreshHere() {
        if (settle != null) {
            settle.cancel(false);
            settle = null;
        }
        long failuresBefore = board.failures();
        try {
            PolicyDriver d = driver.get();
            finishRefresh(d == null ? 0 : d.refresh(), failuresBefore);
        } catch (RuntimeException e) {
            resync.set();
            board.record("refresh failed, next batch resyncs: " + e);
        }
    }

    /**
     * The rest of a refresh once the driver has repaired {@code driverRepaired} items (here or
     * off the thread): routes, counters, health (failures up to {@code failuresBefore} resolved).
     */
    private void finishRefresh(int driverRepaired, long failuresBefore) {
        RouteManager.Stats st = routes.resync();
        int repaired = driverRepaired + st.routesAdded() + st.routesDeleted() + moreRoutes.getAsInt();
        board.refreshed(repaired);
        PolicyDriver d = driver.get();
        if (d != null) {
            board.programmed(d.programmed());
        }
        board.pendingInterfaces(routes.pendingInterfaces());
        observer.refreshed(repaired, board.programmed());
        if (!resync.get()) {
            board.resolvedUpTo(failuresBefore);
        }
        if (repaired > 0) {
            log.warn("Dataplane refresh repaired {} items", repaired);
        }
    }

    /** The driver reads back what it wrote and repairs what a stranger changed meanwhile (no route work). */
    private void settleOnThread() {
        settle = null;
        if (driver.get() == null) {
            return;
        }
        if (!queue.isEmpty()) {
            return; // a change waits: it goes first, and its apply re-arms the read-back
        }
        readBack(false);
    }

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
        PolicyDriver d = driver.get();
        long failuresBefore = board.failures();
        CompletableFuture<IntSupplier> started;
        try {
            started = d.refreshLater();
        } catch (RuntimeException e) {
            resync.set();
            board.record("read-back failed, next batch resyncs: " + e);
            return;
        }
        readBackRunning = true;
        started.whenComplete((step, error) -> thread.post(() -> finishReadBack(d, step, error, periodic, failuresBefore),
                "read-back"));
    }

    private void finishReadBack(PolicyDriver d, IntSupplier step, Throwable error, boolean periodic,
                                long failuresBefore) {
        readBackRunning = false;
        if (d != driver.get()) {
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
                    thread.schedule(() -> readBack(true), TimeUnit.MILLISECONDS.toNanos(settleMillis), "apply");
                }
                return;
            }
            if (periodic) {
                staleReadBacks = 0;
                finishRefresh(repaired, failuresBefore);
                return;
            }
            board.repaired(repaired);
            board.programmed(d.programmed());
            if (repaired > 0) {
                log.warn("Dataplane read-back after the last apply repaired {} items", repaired);
                observer.refreshed(repaired, board.programmed());
            }
        } catch (RuntimeException e) {
            resync.set();
            board.record((periodic ? "refresh" : "read-back after the last apply") + " failed, next batch resyncs: " + e);
        }
    }
}
