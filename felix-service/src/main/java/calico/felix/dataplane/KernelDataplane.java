package calico.felix.dataplane;

import calico.dataplane.iptables.IptablesBackend;
import calico.dataplane.iptables.IptablesRestore;
import calico.dataplane.iptables.Ipset;
import calico.dataplane.iptables.XtablesLockSettings;
import calico.dataplane.netlink.Netlink;
import calico.dataplane.netlink.Sysctls;
import calico.felix.app.Dataplane;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.FelixSettings;
import calico.felix.dataplane.iptables.IptablesDataplane;
import calico.felix.dataplane.routes.RouteManager;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kernel dataplane: iptables/ipset ({@link IptablesDataplane}) and routes/sysctls
 * ({@link RouteManager}) driven from one dedicated thread. Netlink must be created and used on a
 * single thread, and that thread's network namespace is the one programmed: with a namespace
 * name the thread first enters {@code /run/netns/<name>} and the iptables tools run under
 * {@code ip netns exec <name>}, so a containerised felix (or a test) programs that namespace and
 * never the process's own.
 *
 * <p>{@link #apply} hands the batch to the thread and waits, so batches stay in order and the
 * syncer sees back-pressure. Failures are never thrown: they are recorded in {@link #errors()}
 * and the next batch starts with a full resync of both parts. A periodic refresh on the same
 * thread (every {@code iptablesRefreshInterval}, default 180s) repairs iptables/ipset drift and
 * resyncs routes; what it repaired is counted in {@link #repairs()}.
 */
public final class KernelDataplane implements Dataplane, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(KernelDataplane.class);
    private static final Duration DEFAULT_REFRESH = Duration.ofSeconds(180);
    private static final int KEPT_ERRORS = 100;

    private final String netns;
    private final ScheduledExecutorService thread;
    /** Confined to {@link #thread}. */
    private Netlink netlink;
    private RouteManager routes;
    private IptablesDataplane iptables;
    private boolean needResync;
    private Duration refreshInterval = DEFAULT_REFRESH;
    private ScheduledFuture<?> refresh;

    private final Deque<String> errors = new ArrayDeque<>();
    private final AtomicLong repairs = new AtomicLong();
    private final AtomicLong refreshes = new AtomicLong();
    private volatile boolean inSync;

    /**
     * @param backend iptables backend, already resolved (see {@link IptablesBackend#detect})
     * @param netns   network namespace name to program, empty or null for the process's own
     */
    public KernelDataplane(IptablesBackend backend, String netns) {
        Objects.requireNonNull(backend, "backend");
        this.netns = netns == null ? "" : netns.trim();
        String threadName = this.netns.isEmpty() ? "felix-dataplane" : "felix-dataplane-" + this.netns;
        thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        });
        List<String> prefix = this.netns.isEmpty() ? List.of() : List.of("ip", "netns", "exec", this.netns);
        try {
            run(() -> {
            if (!this.netns.isEmpty()) {
                Setns.enter(this.netns);
            }
            netlink = new Netlink();
            routes = new RouteManager(netlink, new Sysctls());
            iptables = new IptablesDataplane(new IptablesRestore(backend, XtablesLockSettings.defaults(), prefix),
                    new Ipset(prefix));
            scheduleRefresh(DEFAULT_REFRESH);
            });
        } catch (RuntimeException e) {
            thread.shutdownNow();
            throw new IllegalStateException("kernel dataplane (namespace "
                    + (this.netns.isEmpty() ? "own" : this.netns) + "): " + e.getMessage(), e);
        }
        log.info("Kernel dataplane: backend {}, namespace {}", backend, this.netns.isEmpty() ? "(own)" : this.netns);
    }

    @Override
    public void apply(List<DataplaneUpdate> batch) {
        List<DataplaneUpdate> copy = List.copyOf(batch);
        try {
            run(() -> applyOnThread(copy));
        } catch (RuntimeException e) {
            record("apply of " + copy.size() + " updates: " + e.getMessage());
        }
    }

    private void applyOnThread(List<DataplaneUpdate> batch) {
        Duration interval = refreshInterval;
        boolean sawInSync = false;
        for (DataplaneUpdate u : batch) {
            if (u instanceof DataplaneUpdate.ConfigUpdate c) {
                interval = refreshIntervalOf(c);
            } else if (u instanceof DataplaneUpdate.InSync) {
                sawInSync = true;
            }
        }
        boolean resync = needResync;
        needResync = true; // cleared only if both parts succeed
        try {
            iptables.apply(batch); // after a failure it resyncs by itself
            routes.apply(batch);
            if (resync) {
                routes.resync();
            }
            needResync = false;
        } catch (RuntimeException e) {
            record("batch of " + batch.size() + " updates failed, next batch resyncs: " + e);
        }
        if (sawInSync) {
            inSync = true;
        }
        if (!interval.equals(refreshInterval)) {
            scheduleRefresh(interval);
        }
    }

    private static Duration refreshIntervalOf(DataplaneUpdate.ConfigUpdate c) {
        try {
            Duration d = FelixSettings.from(c.values()).iptablesRefreshInterval();
            return d == null || d.isNegative() || d.isZero() ? DEFAULT_REFRESH : d;
        } catch (RuntimeException e) {
            log.warn("Unusable iptablesRefreshInterval, keeping {}: {}", DEFAULT_REFRESH, e.getMessage());
            return DEFAULT_REFRESH;
        }
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

    private void refreshOnThread() {
        try {
            int repaired = iptables.refresh();
            RouteManager.Stats st = routes.resync();
            repaired += st.routesAdded() + st.routesDeleted();
            repairs.addAndGet(repaired);
            refreshes.incrementAndGet();
            if (repaired > 0) {
                log.warn("Dataplane refresh repaired {} items", repaired);
            }
        } catch (RuntimeException e) {
            needResync = true;
            record("refresh failed, next batch resyncs: " + e);
        }
    }

    /** Runs a refresh now, on the dataplane thread, and waits; {@return the items it repaired}. */
    public long refreshNow() {
        long before = repairs.get();
        run(this::refreshOnThread);
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

    @Override
    public boolean inSync() {
        return inSync;
    }

    @Override
    public synchronized List<String> errors() {
        return List.copyOf(errors);
    }

    private synchronized void record(String error) {
        log.error("Kernel dataplane: {}", error);
        errors.addLast(error);
        if (errors.size() > KEPT_ERRORS) {
            errors.removeFirst();
        }
    }

    private void run(Runnable body) {
        try {
            thread.submit(body).get();
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
        try {
            run(() -> {
                if (refresh != null) {
                    refresh.cancel(false);
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
