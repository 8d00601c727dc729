package calico.felix.dataplane.nft;

import calico.dataplane.nft.Nftables;
import com.sun.jna.Library;
import com.sun.jna.Native;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Function;

/**
 * A thread of its own, in the network namespace of the thread that creates this object, with its
 * own libnftables context: the driver lists its table here, so reading a large table back never
 * holds up the dataplane thread. Only reads run here (the context never commits), so the kernel
 * sees writes from the dataplane thread alone.
 */
final class NftReader implements AutoCloseable {

    private static final int CLONE_NEWNET = 0x40000000;

    private interface LibC extends Library {
        LibC INSTANCE = Native.load("c", LibC.class);

        int open(String path, int flags);

        int close(int fd);

        int setns(int fd, int nstype);
    }

    private final ExecutorService thread;
    private Nftables nft; // confined to the reader thread

    /** Call on the thread whose namespace the reader must share (the dataplane thread). */
    NftReader(calico.dataplane.calls.ToolCalls calls) {
        // The caller's namespace, held open until the reader thread has entered it.
        int fd = LibC.INSTANCE.open("/proc/thread-self/ns/net", 0);
        if (fd < 0) {
            throw new IllegalStateException("open /proc/thread-self/ns/net: errno " + Native.getLastError());
        }
        String name = Thread.currentThread().getName() + "-nft-reader";
        thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
        try {
            thread.submit(() -> {
                if (LibC.INSTANCE.setns(fd, CLONE_NEWNET) != 0) {
                    throw new IllegalStateException("setns for the nftables reader: errno " + Native.getLastError());
                }
                nft = Nftables.open(calls);
                return null;
            }).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            thread.shutdownNow();
            throw new IllegalStateException("interrupted starting the nftables reader", e);
        } catch (java.util.concurrent.ExecutionException e) {
            thread.shutdownNow();
            throw new IllegalStateException("cannot start the nftables reader: " + e.getCause().getMessage(), e.getCause());
        } finally {
            LibC.INSTANCE.close(fd);
        }
    }

    /** Runs {@code body} with the reader's context on the reader thread. */
    <T> CompletableFuture<T> submit(Function<Nftables, T> body) {
        return CompletableFuture.supplyAsync(() -> body.apply(nft), thread);
    }

    @Override
    public void close() {
        thread.execute(() -> nft.close());
        thread.shutdown(); // the thread entered another namespace: it ends with this object
    }
}
