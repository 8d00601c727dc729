package calico.felix.dataplane.nft;

import calico.dataplane.testing.NetNs;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * A long-lived thread inside a test namespace, standing in for felix's dataplane thread: a
 * libnftables context and the driver using it must stay on one thread, and that thread's
 * namespace is what gets programmed. (A thread started from inside a namespace is born there.)
 */
final class NsThread implements AutoCloseable {

    private final ExecutorService exec;

    NsThread(NetNs ns) {
        exec = ns.call(() -> {
            ExecutorService e = Executors.newSingleThreadExecutor(r -> new Thread(r, "dataplane-" + ns.name()));
            e.submit(() -> { }).get();
            return e;
        });
    }

    <T> T call(Callable<T> body) {
        try {
            return exec.submit(body).get(120, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(e.getCause());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    void run(Runnable body) {
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
