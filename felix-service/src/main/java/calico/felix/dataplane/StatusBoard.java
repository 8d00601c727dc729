package calico.felix.dataplane;

import calico.felix.dataplane.rules.PolicyDriver;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the kernel dataplane reports (kernel-dataplane.md invariant 3, "Metrics and admin"): the
 * counters and last results the queue, the backend switch and the refresh write on the dataplane
 * thread, and the failures, recorded with a number so that a later success can resolve exactly
 * those before it. Read by any thread: the admin API's {@link KernelDataplane.Status}, felix's
 * readiness ({@link #errors()}).
 */
final class StatusBoard {

    /** The dataplane's logger: its lines read as before the split (operators filter on it). */
    private static final Logger log = LoggerFactory.getLogger(KernelDataplane.class);
    static final int KEPT_ERRORS = 100;
    static final PolicyDriver.Programmed NOTHING = new PolicyDriver.Programmed(0, 0, 0, 0);

    /** A failure and its number ({@link #failures} after it was counted). */
    private record Recorded(long seq, String text) {
    }

    private final DataplaneObserver observer;
    /** The last {@value #KEPT_ERRORS} failures, resolved or not, for the admin API. Guarded by this. */
    private final Deque<String> recent = new ArrayDeque<>();
    /** Failures not yet followed by a fully successful apply or refresh: what makes felix not ready. Guarded by this. */
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
    /** System.nanoTime() when the running apply started, 0 when none runs (felix's apply timeout). */
    private volatile long applyStartedAt;
    private volatile String backend = "none";
    private volatile KernelApplyStatus lastApply;
    private volatile PolicyDriver.Programmed programmed = NOTHING;
    private volatile Set<String> pendingInterfaces = Set.of();
    private volatile boolean inSync;
    private volatile KernelDataplane.BackendSwitch lastSwitch;

    StatusBoard(DataplaneObserver observer) {
        this.observer = observer;
    }

    // ---- failures

    /** Logs, counts and keeps a failure (unresolved until a later success), and tells the observer. */
    void record(String error) {
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

    /** {@return failures counted so far}: a success resolves those up to the count taken before it started */
    long failures() {
        return failures.get();
    }

    /** Failures numbered up to {@code seq} are resolved (a success that started after them). */
    synchronized void resolvedUpTo(long seq) {
        unresolved.removeIf(r -> r.seq() <= seq);
    }

    /** {@code problem}: the configured backend cannot be started (null: it can); kept until cleared. */
    void backendProblem(String problem) {
        backendProblem = problem;
    }

    /** {@return the unresolved problems}: the backend problem first, then unresolved failures (without repeating it) */
    synchronized List<String> errors() {
        String problem = backendProblem;
        List<String> out = new ArrayList<>();
        if (problem != null) {
            out.add(problem);
        }
        unresolved.stream().map(Recorded::text).filter(t -> !t.equals(problem)).forEach(out::add);
        return List.copyOf(out);
    }

    /** {@return the last failures, resolved or not}, oldest first */
    synchronized List<String> recentErrors() {
        return List.copyOf(recent);
    }

    // ---- applies

    void applyStarted(long nanoTime) {
        applyStartedAt = nanoTime == 0 ? 1 : nanoTime;
    }

    /** The running apply ended after {@code nanos}. */
    void applyEnded(long nanos) {
        applyStartedAt = 0;
        applyNanos.addAndGet(nanos);
    }

    long applyRunningSince() {
        return applyStartedAt;
    }

    /** An apply finished (or failed: {@code last.error()}); {@code resync}: the driver rewrote everything. */
    void applied(KernelApplyStatus last, boolean resync) {
        applies.incrementAndGet();
        if (resync) {
            resyncs.incrementAndGet();
        }
        lastApply = last;
    }

    void programmed(PolicyDriver.Programmed p) {
        programmed = p;
    }

    PolicyDriver.Programmed programmed() {
        return programmed;
    }

    void pendingInterfaces(Set<String> interfaces) {
        pendingInterfaces = interfaces;
    }

    void linkUpdate() {
        linkUpdates.incrementAndGet();
    }

    /** The graph's InSync has been applied. */
    void inSync() {
        inSync = true;
    }

    boolean isInSync() {
        return inSync;
    }

    // ---- backend

    void backend(String name) {
        backend = name;
    }

    String backend() {
        return backend;
    }

    void restarted() {
        restarts.incrementAndGet();
    }

    void switched(KernelDataplane.BackendSwitch s) {
        lastSwitch = s;
    }

    // ---- refresh

    /** A periodic refresh repaired {@code repaired} items. */
    void refreshed(int repaired) {
        repairs.addAndGet(repaired);
        refreshes.incrementAndGet();
    }

    /** A read-back after the last apply repaired {@code repaired} items. */
    void repaired(int repaired) {
        repairs.addAndGet(repaired);
    }

    long repairs() {
        return repairs.get();
    }

    long refreshes() {
        return refreshes.get();
    }

    /** {@return a point-in-time view} with the queue's counts and the refresh interval, which their owners keep */
    KernelDataplane.Status status(String netns, long queuedBatches, long batches, Duration refreshInterval) {
        return new KernelDataplane.Status(backend, netns, lastApply, programmed, applies.get(), queuedBatches, batches,
                Duration.ofNanos(applyNanos.get()), resyncs.get(), refreshes.get(), repairs.get(), restarts.get(),
                failures.get(), linkUpdates.get(), pendingInterfaces, refreshInterval, inSync, lastSwitch);
    }
}
