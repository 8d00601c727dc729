package calico.controllers.reconcile;

import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one reconciler on a thread of its own: once at start, whenever {@link #trigger()} is called
 * (triggers that arrive while a run is under way coalesce into one more run), and every
 * {@code period} without a trigger. A run that throws is logged and retried after
 * {@code retryBackoff} (the API server gone away pauses the controller; it resumes when a run
 * succeeds). {@code outcome} hears whether each run succeeded (health).
 */
public final class ReconcileLoop implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ReconcileLoop.class);

    private final String name;
    private final Duration period;
    private final Duration retryBackoff;
    private final Runnable reconcile;
    private final Consumer<Boolean> outcome;
    private final BlockingQueue<Boolean> triggers = new ArrayBlockingQueue<>(1);
    private final Thread thread;
    private volatile boolean closed;

    public ReconcileLoop(String name, Duration period, Duration retryBackoff, Runnable reconcile, Consumer<Boolean> outcome) {
        this.name = name;
        this.period = period;
        this.retryBackoff = retryBackoff;
        this.reconcile = reconcile;
        this.outcome = outcome;
        this.thread = new Thread(this::run, "reconcile-" + name);
        this.thread.setDaemon(true);
    }

    public void start() {
        trigger();
        thread.start();
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
            try {
                reconcile.run();
                ok = true;
            } catch (RuntimeException e) {
                ok = false;
                LOG.warn("{}: reconcile failed, retrying in {}: {}", name, retryBackoff, e.toString());
            }
            outcome.accept(ok);
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
        thread.interrupt();
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
