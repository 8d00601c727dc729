package calico.felix.dataplane.routes;

import calico.dataplane.testing.NetNs;
import com.sun.jna.Library;
import com.sun.jna.Native;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * One thread moved into a namespace once and kept there, so a {@code Netlink} built on it and
 * every later call (which must come from one thread) act on that namespace.
 */
final class NamespaceThread implements AutoCloseable {

    private interface LibC extends Library {
        LibC INSTANCE = Native.load("c", LibC.class);

        int open(String path, int flags);

        int close(int fd);

        int setns(int fd, int nstype);
    }

    private final ExecutorService thread;

    NamespaceThread(NetNs ns) {
        thread = Executors.newSingleThreadExecutor(r -> new Thread(r, "routes-in-" + ns.name()));
        call(() -> {
            int fd = LibC.INSTANCE.open("/run/netns/" + ns.name(), 0);
            if (fd < 0) {
                throw new IllegalStateException("open /run/netns/" + ns.name() + ": errno " + Native.getLastError());
            }
            try {
                if (LibC.INSTANCE.setns(fd, 0x40000000) != 0) {
                    throw new IllegalStateException("setns " + ns.name() + ": errno " + Native.getLastError());
                }
            } finally {
                LibC.INSTANCE.close(fd);
            }
            return null;
        });
    }

    <T> T call(Callable<T> body) {
        try {
            return thread.submit(body).get(60, TimeUnit.SECONDS);
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

    @Override
    public void close() {
        // The thread's namespace changed for good: it dies with this object.
        thread.shutdownNow();
    }
}
