package calico.dataplane.testing;

import calico.controlplane.Owned;
import com.sun.jna.Library;
import com.sun.jna.Native;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A network namespace a test creates for itself: uniquely named after its JVM ({@link Owned}), loopback up,
 * deleted on {@link #close()} (and by a shutdown hook if the JVM exits first; what a JVM killed with SIGKILL
 * left, the next {@link #create} deletes). Tests create the namespaces
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

        int socket(int domain, int type, int protocol);

        int setsockopt(int fd, int level, int option, byte[] value, int length);

        long sendto(int fd, byte[] buf, long length, int flags, byte[] address, int addressLength);

        long recv(int fd, byte[] buf, long length, int flags);
    }

    private static final int AF_INET = 2;
    private static final int SOCK_DGRAM = 2;
    private static final int IPPROTO_ICMP = 1;
    private static final int SOL_SOCKET = 1;
    private static final int SO_RCVTIMEO = 20;

    private final String name;
    private final Thread cleanup;
    /**
     * Source port of the next UDP probe: each probe takes the next one (16384–65535, from a random
     * start), so no port repeats within a namespace's life short of 49k probes. A kernel-chosen
     * ephemeral port can repeat one used seconds earlier, and conntrack then answers for the old,
     * perhaps allowed, flow.
     */
    private final java.util.concurrent.atomic.AtomicInteger nextUdpPort =
            new java.util.concurrent.atomic.AtomicInteger(ThreadLocalRandom.current().nextInt(49_152));
    private boolean closed;
    private volatile boolean pingAllowed;

    private NetNs(String name) {
        this.name = name;
        this.cleanup = new Thread(() -> run(false, "ip", "netns", "delete", name), "netns-cleanup-" + name);
        Runtime.getRuntime().addShutdownHook(cleanup);
    }

    /**
     * {@return a new namespace named {@code <prefix>-p<this JVM's pid>-<8 hex>}} ({@link Owned}) with {@code lo}
     * up, after deleting the namespaces a test JVM that no longer runs left behind.
     */
    public static NetNs create(String prefix) {
        String name = newName(prefix);
        run(true, "ip", "netns", "add", name);
        NetNs ns = new NetNs(name);
        ns.exec("ip", "link", "set", "lo", "up");
        return ns;
    }

    /**
     * {@return a new name owned by this JVM} ({@link Owned}), after deleting the namespaces test JVMs that
     * are gone left behind: for tests that make their namespaces themselves, one with this name or several
     * named {@code <name>-<suffix>}, and delete them themselves (the sweep is for a JVM killed first).
     */
    public static String newName(String prefix) {
        sweepLeftovers();
        return Owned.name(prefix);
    }

    /**
     * Deletes the namespaces of test JVMs that are gone (killed before their shutdown hooks ran), after ending
     * the processes those JVMs left running in them ({@link #endProcessesIn}).
     */
    static void sweepLeftovers() {
        java.nio.file.Path dir = java.nio.file.Path.of("/run/netns");
        List<String> names;
        try (java.util.stream.Stream<java.nio.file.Path> s = java.nio.file.Files.list(dir)) {
            names = s.map(p -> p.getFileName().toString()).filter(Owned::ownerGone).toList();
        } catch (IOException e) {
            return; // no /run/netns yet: nothing left
        }
        for (String n : names) {
            endProcessesIn(n);
            Result r = execute("ip", "netns", "delete", n);
            System.err.println("NetNs: deleted " + n + ", left by a test JVM that is gone"
                    + (r.status() == 0 ? "" : " (" + r.output().strip() + ")"));
        }
    }

    /**
     * Kills (SIGKILL) the processes in namespace {@code name} and everything they started, wherever that runs:
     * a killed JVM's children live on (BIRD in confd's lab; kubelet, containerd and its shims on a charts node,
     * and a container's processes, children of a shim, in a namespace of their own), and a namespace deleted
     * from {@code /run/netns} lives on while a process is in it, with its links and addresses. Children are
     * listed before anyone is killed (a killed parent's children move to init, out of reach), and again until
     * none is left (one may have forked meanwhile). A namespace this JVM is in is never a leftover: left alone.
     */
    static void endProcessesIn(String name) {
        for (int round = 0; round < 5; round++) {
            Result pids = execute("ip", "netns", "pids", name);
            if (pids.status() != 0) {
                return; // gone already
            }
            List<ProcessHandle> inside = pids.output().lines().map(String::strip).filter(l -> l.matches("\\d+"))
                    .map(l -> ProcessHandle.of(Long.parseLong(l))).flatMap(java.util.Optional::stream).toList();
            if (inside.isEmpty()) {
                return;
            }
            if (inside.contains(ProcessHandle.current())) {
                System.err.println("NetNs: " + name + " holds this JVM: its processes are left alone");
                return;
            }
            java.util.Set<ProcessHandle> tree = new java.util.LinkedHashSet<>(inside);
            inside.forEach(p -> p.descendants().forEach(tree::add));
            tree.forEach(ProcessHandle::destroyForcibly);
            for (ProcessHandle p : tree) {
                p.onExit().completeOnTimeout(p, 10, TimeUnit.SECONDS).join();
            }
            System.err.println("NetNs: killed " + tree.stream().map(p -> Long.toString(p.pid())).toList() + " in " + name
                    + ", left by a test JVM that is gone");
        }
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

    /**
     * A TCP listener on {@code ip:port} inside this namespace that accepts and closes every
     * connection on a daemon thread, so that any number of probes can connect (a listener that
     * never accepts stops answering SYNs once its backlog is full).
     */
    public Listener tcpListener(String ip, int port) {
        java.net.ServerSocket server = call(() -> new java.net.ServerSocket(port, 200, java.net.InetAddress.getByName(ip)));
        Thread t = new Thread(() -> {
            while (!server.isClosed()) {
                try {
                    server.accept().close();
                } catch (IOException e) {
                    // closed: the loop ends
                }
            }
        }, "tcp-listener-" + name + "-" + port);
        t.setDaemon(true);
        t.start();
        return new Listener(server::close);
    }

    /** A UDP echo responder on {@code ip:port} inside this namespace (daemon thread). */
    public Listener udpEcho(String ip, int port) {
        java.net.DatagramSocket socket = call(() -> new java.net.DatagramSocket(
                new java.net.InetSocketAddress(java.net.InetAddress.getByName(ip), port)));
        Thread t = new Thread(() -> {
            byte[] buf = new byte[1500];
            while (!socket.isClosed()) {
                try {
                    java.net.DatagramPacket p = new java.net.DatagramPacket(buf, buf.length);
                    socket.receive(p);
                    socket.send(new java.net.DatagramPacket(p.getData(), p.getLength(), p.getSocketAddress()));
                } catch (IOException e) {
                    // closed: the loop ends
                }
            }
        }, "udp-echo-" + name + "-" + port);
        t.setDaemon(true);
        t.start();
        return new Listener(socket::close);
    }

    /**
     * {@return whether a UDP datagram sent from inside this namespace to {@code ip:port} comes
     * back unchanged within {@code timeout}} (needs {@link #udpEcho} at the other end). Each
     * probe sends from a source port this namespace has not used before ({@link #nextUdpPort}),
     * so an earlier flow's conntrack entry never answers for it.
     */
    public boolean udpEchoes(String ip, int port, java.time.Duration timeout) {
        return call(() -> {
            byte[] token = new byte[16];
            ThreadLocalRandom.current().nextBytes(token);
            long deadline = System.nanoTime() + timeout.toNanos();
            try (java.net.DatagramSocket s = unusedUdpSocket()) {
                s.send(new java.net.DatagramPacket(token, token.length, java.net.InetAddress.getByName(ip), port));
                byte[] buf = new byte[64];
                while (true) {
                    long left = (deadline - System.nanoTime()) / 1_000_000;
                    if (left <= 0) {
                        return false;
                    }
                    s.setSoTimeout((int) left);
                    java.net.DatagramPacket p = new java.net.DatagramPacket(buf, buf.length);
                    s.receive(p);
                    if (p.getLength() == token.length
                            && java.util.Arrays.equals(token, 0, token.length, p.getData(), 0, token.length)) {
                        return true;
                    }
                }
            } catch (IOException e) {
                return false;
            }
        });
    }

    /** A UDP socket on the next unused source port (one in use by someone else is skipped). */
    private java.net.DatagramSocket unusedUdpSocket() throws java.net.SocketException {
        while (true) {
            int port = 16_384 + Math.floorMod(nextUdpPort.getAndIncrement(), 49_152);
            try {
                return new java.net.DatagramSocket(port);
            } catch (java.net.BindException taken) {
                // in use: try the next
            }
        }
    }

    /**
     * {@return whether an ICMP echo request from inside this namespace to {@code ip} is answered
     * within {@code timeout}}. Uses a kernel ping socket ({@code SOCK_DGRAM}/{@code IPPROTO_ICMP};
     * the first call allows them in this namespace through {@code net.ipv4.ping_group_range}):
     * each probe's socket gets a fresh ICMP id from the kernel, so, unlike
     * {@code InetAddress.isReachable} (whose id is the process id), a probe is never answered
     * by conntrack's memory of an earlier echo.
     */
    public boolean pings(String ip, java.time.Duration timeout) {
        if (!pingAllowed) {
            exec("sysctl", "-qw", "net.ipv4.ping_group_range=0 2147483647");
            pingAllowed = true;
        }
        byte[] addr = sockaddrIn(ip);
        return call(() -> {
            int fd = LibC.INSTANCE.socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP);
            if (fd < 0) {
                throw new IllegalStateException("cannot open an ICMP ping socket in " + name + ": errno "
                        + Native.getLastError());
            }
            try {
                byte[] request = new byte[8 + 16];
                request[0] = 8; // echo request; id and checksum are the kernel's job on a ping socket
                request[7] = 1;
                byte[] payload = new byte[16];
                ThreadLocalRandom.current().nextBytes(payload);
                System.arraycopy(payload, 0, request, 8, payload.length);
                if (LibC.INSTANCE.sendto(fd, request, request.length, 0, addr, addr.length) < 0) {
                    return false; // e.g. unreachable: counts as no answer
                }
                long deadline = System.nanoTime() + timeout.toNanos();
                byte[] reply = new byte[128];
                while (true) {
                    long leftUs = (deadline - System.nanoTime()) / 1_000;
                    if (leftUs <= 0) {
                        return false;
                    }
                    java.nio.ByteBuffer tv = java.nio.ByteBuffer.allocate(16).order(java.nio.ByteOrder.nativeOrder());
                    tv.putLong(leftUs / 1_000_000).putLong(leftUs % 1_000_000);
                    LibC.INSTANCE.setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, tv.array(), 16);
                    long n = LibC.INSTANCE.recv(fd, reply, reply.length, 0);
                    if (n < 0) {
                        return false; // timed out, or an ICMP error reported on the socket
                    }
                    if (n == request.length && reply[0] == 0
                            && java.util.Arrays.equals(payload, 0, 16, reply, 8, 24)) {
                        return true;
                    }
                }
            } finally {
                LibC.INSTANCE.close(fd);
            }
        });
    }

    private static byte[] sockaddrIn(String ip) {
        byte[] a;
        try {
            a = java.net.InetAddress.getByName(ip).getAddress();
        } catch (java.net.UnknownHostException e) {
            throw new IllegalArgumentException("not an IP address: " + ip, e);
        }
        if (a.length != 4) {
            throw new IllegalArgumentException("pings are IPv4 only: " + ip);
        }
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(16);
        b.order(java.nio.ByteOrder.nativeOrder()).putShort((short) AF_INET);
        b.order(java.nio.ByteOrder.BIG_ENDIAN).putShort((short) 0).put(a);
        return b.array();
    }

    /** Something a probe talks to; {@link #close()} stops it. */
    public static final class Listener implements AutoCloseable {
        private final java.io.Closeable socket;

        private Listener(java.io.Closeable socket) {
            this.socket = socket;
        }

        @Override
        public void close() {
            try {
                socket.close();
            } catch (IOException ignored) {
                // already closed
            }
        }
    }

    /** {@return the value of {@code /proc/sys/net/<key>} as this namespace sees it}. */
    public String sysctl(String key) {
        return exec("cat", "/proc/sys/net/" + key).trim();
    }

    /**
     * Gives this namespace what a node has besides its workloads: an uplink veth {@code up0}
     * (peer {@code up1}, both up) holding the node address {@code 192.168.255.1/32} and the default
     * route. Proxy ARP answers only for addresses routed out of another interface, so workloads'
     * ARP for 169.254.1.1 needs this route.
     */
    public void uplink() {
        exec("ip", "link", "add", "up0", "type", "veth", "peer", "name", "up1");
        exec("ip", "link", "set", "up0", "up");
        exec("ip", "link", "set", "up1", "up");
        exec("ip", "addr", "add", "192.168.255.1/32", "dev", "up0");
        exec("ip", "route", "add", "default", "dev", "up0");
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
