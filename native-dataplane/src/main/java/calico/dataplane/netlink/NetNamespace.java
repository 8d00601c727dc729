package calico.dataplane.netlink;

import com.sun.jna.Library;
import com.sun.jna.Native;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * An open network namespace (a file such as {@code /var/run/netns/x} or
 * {@code /proc/<pid>/ns/net}), for creating links in it ({@link #fd()}) and for running code
 * inside it ({@link #call}).
 *
 * <p>{@code setns(2)} changes only the calling thread, and a thread's namespace is then changed
 * for good, so {@link #call} runs each body on a fresh thread that is thrown away afterwards:
 * the caller's threads never leave their namespace. Netlink sockets, {@link Sysctls} and
 * sockets opened by the body act on this namespace.
 */
public final class NetNamespace implements AutoCloseable {
    private static final int CLONE_NEWNET = 0x40000000;
    private static final int O_RDONLY = 0;
    private static final int O_CLOEXEC = 0x80000;
    private static final long TIMEOUT_SECONDS = 60;

    private interface NsLibC extends Library {
        NsLibC INSTANCE = Native.load("c", NsLibC.class);

        int open(String path, int flags);

        int close(int fd);

        int setns(int fd, int nstype);
    }

    private final String path;
    private final int fd;
    private boolean closed;

    private NetNamespace(String path, int fd) {
        this.path = path;
        this.fd = fd;
    }

    /**
     * Opens the namespace file {@code path}.
     *
     * @throws NetlinkException with ENOENT when there is no such file, or the open's errno
     */
    public static NetNamespace open(String path) {
        if (path == null || path.isEmpty()) {
            throw new IllegalArgumentException("netns path: is empty");
        }
        int fd = NsLibC.INSTANCE.open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            throw new NetlinkException("open netns " + path, Native.getLastError(), null);
        }
        return new NetNamespace(path, fd);
    }

    public String path() {
        return path;
    }

    /** {@return the open file descriptor} (valid until {@link #close()}). */
    public int fd() {
        return fd;
    }

    /** Runs {@code body} on a fresh thread inside this namespace and returns its result. */
    public <T> T call(Callable<T> body) {
        ExecutorService one = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "netns-" + path);
            t.setDaemon(true);
            return t;
        });
        try {
            Future<T> f = one.submit(() -> {
                if (NsLibC.INSTANCE.setns(fd, CLONE_NEWNET) != 0) {
                    throw new NetlinkException("setns " + path, Native.getLastError(), null);
                }
                return body.call();
            });
            return f.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof RuntimeException re) {
                throw re;
            }
            if (c instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException("in netns " + path + ": " + c, c);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted in netns " + path, e);
        } catch (TimeoutException e) {
            throw new IllegalStateException("no answer from netns " + path + " in " + TIMEOUT_SECONDS + " s", e);
        } finally {
            one.shutdownNow();
        }
    }

    /**
     * Moves the calling thread into the namespace {@code ip netns add name} created
     * ({@code /run/netns/<name>}), for the thread's whole life: for dedicated threads only.
     *
     * @throws NetlinkException naming the namespace and the errno of the open or the setns
     */
    public static void enterNamed(String name) {
        try (NetNamespace ns = open("/run/netns/" + name)) {
            if (NsLibC.INSTANCE.setns(ns.fd, CLONE_NEWNET) != 0) {
                throw new NetlinkException("setns " + ns.path, Native.getLastError(), null);
            }
        }
    }

    public void run(Runnable body) {
        call(() -> {
            body.run();
            return null;
        });
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            NsLibC.INSTANCE.close(fd);
        }
    }
}
