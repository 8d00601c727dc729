package calico.controllers.reconcile;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one reconciler on a thread of its own: once at start, whenever {@link #trigger()} is called
 * (triggers that arrive while a run is under way coalesce into one more run), and every
 * {@code period} without a trigger. A run that throws is logged and retried after
 * {@code retryBackoff} (the API server gone away pauses the controller; it resumes when a run
 * succeeds). While it runs it is in its {@link LoopWatch}, whose {@link #status()} snapshots tell health
 * whether it is stuck in a run or failing.
 */
public final class ReconcileLoop implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ReconcileLoop.class);

    private final String name;
    private final Duration period;
    private final Duration retryBackoff;
    private final Runnable reconcile;
    private final LoopWatch watch;
    private final BlockingQueue<Boolean> triggers = new ArrayBlockingQueue<>(1);
    private final Thread thread;
    private volatile boolean closed;
    private volatile Instant runningSince;
    private volatile Instant progressAt;
    private volatile Instant lastSuccess;
    private volatile Instant lastFailure;
    private volatile String lastError = "";

    public ReconcileLoop(String name, Duration period, Duration retryBackoff, Runnable reconcile, LoopWatch watch) {
        this.name = name;
        this.period = period;
        this.retryBackoff = retryBackoff;
        this.reconcile = reconcile;
        this.watch = watch;
        this.thread = new Thread(this::run, "reconcile-" + name);
        this.thread.setDaemon(true);
    }

    public void start() {
        trigger();
        watch.joined(this);
        thread.start();
    }

    /** {@return what this loop is doing now} */
    public LoopStatus status() {
        Instant since = runningSince;
        Instant progress = progressAt; // may be cleared between the two reads when the run ends
        return new LoopStatus(name, since, since == null ? null : progress == null ? since : progress, lastSuccess,
                lastFailure, lastError);
    }

    /**
     * Called by a long run each time it finishes a piece of work (a Service addressed): health calls a loop
     * stuck when its run has not moved on for a while, not merely when it is long.
     */
    public void progressed() {
        if (runningSince != null) {
            progressAt = Instant.now();
        }
    }

    /** Asks for a run soon; never blocks. */
    public void trigger() {
        triggers.offer(Boolean.TRUE);
    }

    private void run() {
        while (!closed) {
            try {
                triggers.poll(period.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                return;
            }
            if (closed) {
                return;
            }
            boolean ok;
            Instant started = Instant.now();
            progressAt = started;
            runningSince = started;
            try {
                reconcile.run();
                ok = true;
                lastSuccess = Instant.now();
            } catch (RuntimeException e) {
                ok = false;
                lastError = e.toString();
                lastFailure = Instant.now();
                LOG.warn("{}: reconcile failed, retrying in {}: {}", name, retryBackoff, e.toString());
            }
            // Not in a finally: an Error ends the thread with runningSince set, and health calls the loop stuck.
            runningSince = null;
            progressAt = null;
            if (!ok && !closed) {
                try {
                    Thread.sleep(retryBackoff.toMillis());
                } catch (InterruptedException e) {
                    return;
                }
                trigger();
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        watch.left(this);
        thread.interrupt();
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
