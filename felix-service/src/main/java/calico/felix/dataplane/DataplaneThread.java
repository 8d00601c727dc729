package calico.felix.dataplane;

import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The one thread that owns the kernel dataplane's netlink socket, sysctls, routes and policy
 * driver (kernel-dataplane.md invariant 1); it may enter another network namespace for good, so
 * it dies with its owner. Work posted without waiting never throws to the poster: a failure is
 * handed to {@code onFailure} as {@code "<what>: <exception>"}; after {@link #shutdownNow} new
 * work is dropped (nothing is left to program).
 */
final class DataplaneThread {

    private final ScheduledExecutorService executor;
    private final Consumer<String> onFailure;

    DataplaneThread(String name, Consumer<String> onFailure) {
        this.onFailure = onFailure;
        executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
    }

    /** Queues {@code body} without waiting. */
    void post(Runnable body, String what) {
        try {
            executor.execute(guarded(body, what));
        } catch (RejectedExecutionException e) {
            // Closing: nothing left to program.
        }
    }

    /** Runs {@code body} after {@code delayNanos}, without waiting. */
    void schedule(Runnable body, long delayNanos, String what) {
        try {
            executor.schedule(guarded(body, what), delayNanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // Closing: nothing left to program.
        }
    }

    /** A one-shot timer the caller may cancel (its failures are the body's to handle). */
    ScheduledFuture<?> timer(Runnable body, long delayMillis) {
        return executor.schedule(body, delayMillis, TimeUnit.MILLISECONDS);
    }

    /** A repeating timer, first run after one period. */
    ScheduledFuture<?> every(Runnable body, long periodMillis) {
        return executor.scheduleWithFixedDelay(body, periodMillis, periodMillis, TimeUnit.MILLISECONDS);
    }

    private Runnable guarded(Runnable body, String what) {
        return () -> {
            try {
                body.run();
            } catch (RuntimeException e) {
                onFailure.accept(what + ": " + e);
            }
        };
    }

    /** Runs {@code body} on the thread and waits; its exception is rethrown here. */
    void run(Runnable body) {
        call(() -> {
            body.run();
            return null;
        });
    }

    <T> T call(Callable<T> body) {
        try {
            return executor.submit(body).get();
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

    void shutdownNow() {
        executor.shutdownNow();
    }
}
