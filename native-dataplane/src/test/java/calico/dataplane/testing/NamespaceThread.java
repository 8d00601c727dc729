package calico.dataplane.testing;

import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * One long-lived thread inside a test namespace, standing in for felix's dataplane thread:
 * netlink sockets and libnftables contexts must be created and used on one thread, and that
 * thread's namespace is the one they act on. The thread is born inside the namespace (a thread
 * started from a thread that entered it inherits it), so it never needs to move.
 */
public final class NamespaceThread implements AutoCloseable {

    private static final long TIMEOUT_SECONDS = 120;

    private final ExecutorService exec;

    public NamespaceThread(NetNs ns) {
        exec = ns.call(() -> {
            ExecutorService e = Executors.newSingleThreadExecutor(r -> new Thread(r, "in-" + ns.name()));
            e.submit(() -> { }).get(); // start the thread now, while we are inside the namespace
            return e;
        });
    }

    /** Runs {@code body} on the thread and waits; its exceptions are rethrown unchecked. */
    public <T> T call(Callable<T> body) {
        try {
            return exec.submit(body).get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("no answer from the namespace thread in " + TIMEOUT_SECONDS + " s", e);
        }
    }

    public void run(Runnable body) {
        call(() -> {
            body.run();
            return null;
        });
    }

    @Override
    public void close() {
        exec.shutdownNow();
    }
}
