package calico.libcalico.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A TCP relay on a loopback port to one target, for breaking a client's connections while the
 * server keeps running: {@link #cut()} closes every relayed connection (as a network fault
 * would, mid-stream), and while {@link #hold(boolean) held} new connections are accepted but
 * not relayed until released, so that a test can change things before a client's reconnect
 * reaches the server. Bytes pass unchanged (TLS included: the client still talks to the
 * target's certificate, which must name the loopback address).
 */
public final class TcpProxy implements AutoCloseable {

    private final InetSocketAddress target;
    private final ServerSocket listener;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final List<Socket> waiting = new ArrayList<>(); // guarded by this
    private boolean held; // guarded by this
    private boolean refusing; // guarded by this
    /** When each refused connection came ({@link System#nanoTime()}). */
    private final List<Long> refusals = java.util.Collections.synchronizedList(new ArrayList<>());
    private volatile boolean closed;

    /** Relays 127.0.0.1:{@link #port()} to {@code target}. */
    public TcpProxy(InetSocketAddress target) {
        this.target = target;
        try {
            listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new IllegalStateException("cannot listen on loopback", e);
        }
        daemon("tcp-proxy-accept-" + port(), this::acceptLoop).start();
    }

    public int port() {
        return listener.getLocalPort();
    }

    /** Closes every relayed connection now (not those held); the client sees its streams break. */
    public void cut() {
        for (Socket s : List.copyOf(open)) {
            closeQuietly(s);
        }
    }

    /** While {@code on}, new connections wait unrelayed; turning it off relays those that waited. */
    public void hold(boolean on) {
        List<Socket> release;
        synchronized (this) {
            held = on;
            release = on ? List.of() : List.copyOf(waiting);
            waiting.clear();
        }
        release.forEach(this::relay);
    }

    /**
     * While {@code on}, new connections are closed as soon as they are accepted, as if the server
     * were down (the client's connect succeeds, its request fails at once), and counted.
     */
    public synchronized void refuse(boolean on) {
        refusing = on;
    }

    /** {@return connections closed unrelayed while refusing, so far} (a client's failed attempts) */
    public int refused() {
        return refusals.size();
    }

    /** {@return the longest time between two refused connections in a row} (a client's longest retry wait); zero before two */
    public Duration longestGapBetweenRefusals() {
        List<Long> at = List.copyOf(refusals);
        long max = 0;
        for (int i = 1; i < at.size(); i++) {
            max = Math.max(max, at.get(i) - at.get(i - 1));
        }
        return Duration.ofNanos(max);
    }

    /**
     * Cuts every relayed connection and refuses new ones while {@code whileDown} runs (an outage
     * the client's retries see as fast failures, as after a server crash), then relays again.
     *
     * @return {@link System#nanoTime()} when the server became reachable again
     */
    public long cutAndRefuseWhile(Runnable whileDown) {
        refuse(true);
        cut();
        try {
            whileDown.run();
        } finally {
            refuse(false);
        }
        return System.nanoTime();
    }

    /** {@return the connections held (accepted, not yet relayed)} */
    public synchronized int waiting() {
        return waiting.size();
    }

    /**
     * Cuts every relayed connection and holds the reconnects while {@code whileDown} runs, then
     * waits for at least one reconnect to be waiting (so that everything {@code whileDown} did
     * happened while the client was cut off) and relays it.
     */
    public void cutAndHoldWhile(Runnable whileDown) {
        hold(true);
        cut();
        try {
            whileDown.run();
            Await.until("a client reconnecting through the proxy", Duration.ofSeconds(30), () -> waiting() > 0);
        } finally {
            hold(false);
        }
    }

    @Override
    public void close() {
        closed = true;
        closeQuietly(listener);
        cut();
        synchronized (this) {
            waiting.forEach(TcpProxy::closeQuietly);
            waiting.clear();
        }
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                return; // closed
            }
            synchronized (this) {
                if (refusing) {
                    refusals.add(System.nanoTime());
                    closeQuietly(client);
                    continue;
                }
                if (held) {
                    waiting.add(client);
                    continue;
                }
            }
            relay(client);
        }
    }

    private void relay(Socket client) {
        Socket upstream = new Socket();
        try {
            upstream.connect(target, 5_000);
        } catch (IOException e) {
            closeQuietly(client);
            return;
        }
        open.add(client);
        open.add(upstream);
        daemon("tcp-proxy-up-" + port(), () -> pump(client, upstream)).start();
        daemon("tcp-proxy-down-" + port(), () -> pump(upstream, client)).start();
    }

    private void pump(Socket from, Socket to) {
        byte[] buf = new byte[16 * 1024];
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            int n;
            while ((n = in.read(buf)) >= 0) {
                out.write(buf, 0, n);
                out.flush();
            }
        } catch (IOException ignored) {
            // one side closed or was cut
        } finally {
            closeQuietly(from);
            closeQuietly(to);
            open.remove(from);
            open.remove(to);
        }
    }

    private static Thread daemon(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        return t;
    }

    private static void closeQuietly(java.io.Closeable c) {
        try {
            c.close();
        } catch (IOException ignored) {
            // already closed
        }
    }
}
