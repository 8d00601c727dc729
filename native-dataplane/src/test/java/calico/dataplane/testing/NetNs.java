package calico.dataplane.testing;

import com.sun.jna.Library;
import com.sun.jna.Native;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A network namespace a test creates for itself: uniquely named, loopback up, deleted on
 * {@link #close()} (and by a shutdown hook if the JVM dies first). Tests create the namespaces
 * and veth pairs with {@code ip} (test set-up may shell out); the code under test runs inside
 * through {@link #call(Callable)}, on a fresh thread moved into the namespace with
 * {@code setns(2)}, so JNA/netlink/libnftables calls act on the namespace, not the machine.
 *
 * <p>Needs root, as CI has. {@link #available()} says whether namespaces can be made here.
 */
public final class NetNs implements AutoCloseable {

    private static final int CLONE_NEWNET = 0x40000000;
    private static final int O_RDONLY = 0;

    private interface LibC extends Library {
        LibC INSTANCE = Native.load("c", LibC.class);

        int open(String path, int flags);

        int close(int fd);

        int setns(int fd, int nstype);
    }

    private final String name;
    private final Thread cleanup;
    private boolean closed;

    private NetNs(String name) {
        this.name = name;
        this.cleanup = new Thread(() -> run(false, "ip", "netns", "delete", name), "netns-cleanup-" + name);
        Runtime.getRuntime().addShutdownHook(cleanup);
    }

    /** {@return a new namespace named {@code <prefix>-<8 hex>}} with {@code lo} up. */
    public static NetNs create(String prefix) {
        byte[] b = new byte[4];
        ThreadLocalRandom.current().nextBytes(b);
        String name = prefix + "-" + HexFormat.of().formatHex(b);
        run(true, "ip", "netns", "add", name);
        NetNs ns = new NetNs(name);
        ns.exec("ip", "link", "set", "lo", "up");
        return ns;
    }

    /** {@return whether this process may create network namespaces} (root with iproute2). */
    public static boolean available() {
        try {
            NetNs probe = create("calico-probe");
            probe.close();
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    public String name() {
        return name;
    }

    /** Runs a command inside the namespace; fails with its output if it exits non-zero. */
    public String exec(String... command) {
        List<String> full = new ArrayList<>(List.of("ip", "netns", "exec", name));
        full.addAll(List.of(command));
        return run(true, full.toArray(String[]::new));
    }

    /** Like {@link #exec} but returns the exit status and output instead of failing. */
    public Result tryExec(String... command) {
        List<String> full = new ArrayList<>(List.of("ip", "netns", "exec", name));
        full.addAll(List.of(command));
        return execute(full.toArray(String[]::new));
    }

    /** Runs {@code body} on a new thread inside the namespace and returns its result. */
    public <T> T call(Callable<T> body) {
        ExecutorService one = Executors.newSingleThreadExecutor(r -> new Thread(r, "in-netns-" + name));
        try {
            Future<T> f = one.submit(() -> {
                int fd = LibC.INSTANCE.open("/run/netns/" + name, O_RDONLY);
                if (fd < 0) {
                    throw new IllegalStateException("cannot open /run/netns/" + name + ": errno " + Native.getLastError());
                }
                try {
                    if (LibC.INSTANCE.setns(fd, CLONE_NEWNET) != 0) {
                        throw new IllegalStateException("setns into " + name + " failed: errno " + Native.getLastError());
                    }
                } finally {
                    LibC.INSTANCE.close(fd);
                }
                return body.call();
            });
            return f.get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof RuntimeException re) {
                throw re;
            }
            if (c instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(c);
        } catch (Exception e) {
            throw new IllegalStateException("running in " + name + ": " + e, e);
        } finally {
            // The thread's namespace is changed for good: never reuse it.
            one.shutdownNow();
        }
    }

    /** Runs {@code body} inside the namespace. */
    public void run(Runnable body) {
        call(() -> {
            body.run();
            return null;
        });
    }

    /**
     * {@return whether a TCP handshake from inside this namespace to {@code ip:port} completes
     * within {@code timeout}}; any failure (refused, timed out, unreachable) counts as no.
     */
    public boolean tcpConnects(String ip, int port, java.time.Duration timeout) {
        return call(() -> {
            try (java.net.Socket s = new java.net.Socket()) {
                s.connect(new java.net.InetSocketAddress(ip, port), (int) timeout.toMillis());
                return true;
            } catch (IOException e) {
                return false;
            }
        });
    }

    /** {@return the value of {@code /proc/sys/net/<key>} as this namespace sees it}. */
    public String sysctl(String key) {
        return exec("cat", "/proc/sys/net/" + key).trim();
    }

    /**
     * Creates a veth pair with {@code hostSide} in this namespace and {@code peerSide} in
     * {@code peer}, both up.
     */
    public void veth(String hostSide, NetNs peer, String peerSide) {
        exec("ip", "link", "add", hostSide, "type", "veth", "peer", "name", peerSide, "netns", peer.name());
        exec("ip", "link", "set", hostSide, "up");
        peer.exec("ip", "link", "set", peerSide, "up");
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        run(false, "ip", "netns", "delete", name);
        try {
            Runtime.getRuntime().removeShutdownHook(cleanup);
        } catch (IllegalStateException ignored) {
            // already shutting down: the hook runs anyway
        }
    }

    /** A finished command: exit status and combined output. */
    public record Result(int status, String output) {
    }

    private static String run(boolean check, String... command) {
        Result r = execute(command);
        if (check && r.status() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " exited " + r.status() + ": " + r.output());
        }
        return r.output();
    }

    private static Result execute(String... command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return new Result(-1, out + "\n(timed out)");
            }
            return new Result(p.exitValue(), out);
        } catch (IOException e) {
            return new Result(-1, "cannot run " + command[0] + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Result(-1, "interrupted");
        }
    }
}
