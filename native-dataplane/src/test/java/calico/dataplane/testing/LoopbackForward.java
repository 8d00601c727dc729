package calico.dataplane.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Makes {@code 127.0.0.1:port} inside a test namespace reach {@code 127.0.0.1:port} of the test's
 * own namespace: a server that only listens on loopback (a kube-apiserver the test started) is
 * then reachable from code running inside the namespace with the very same URL, certificate and
 * kubeconfig. Bytes are relayed untouched (TLS passes through), one pair of threads per
 * connection. A socket belongs to the namespace of the thread that created it, so the listening
 * socket is made inside the namespace and each outgoing one here.
 */
public final class LoopbackForward implements AutoCloseable {

    private final ServerSocket server;
    private final Thread accept;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();

    private LoopbackForward(NetNs ns, int port) {
        this.server = ns.call(() -> new ServerSocket(port, 50, InetAddress.getLoopbackAddress()));
        this.accept = new Thread(this::acceptLoop, "loopback-forward-" + ns.name() + "-" + port);
        accept.setDaemon(true);
        accept.start();
    }

    /** {@return a running forward of {@code port} from inside {@code ns} to here}; close it to stop. */
    public static LoopbackForward into(NetNs ns, int port) {
        return new LoopbackForward(ns, port);
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            Socket inside;
            try {
                inside = server.accept();
            } catch (IOException e) {
                return; // closed
            }
            Socket outside = new Socket();
            try {
                outside.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort()), 5_000);
            } catch (IOException e) {
                // Nothing listens here (the server is down): refuse the inside connection the same way.
                closeQuietly(inside);
                closeQuietly(outside);
                continue;
            }
            open.add(inside);
            open.add(outside);
            AtomicInteger running = new AtomicInteger(2);
            relay(inside, outside, running);
            relay(outside, inside, running);
        }
    }

    /**
     * Copies {@code from} to {@code to} until {@code from} ends, then half-closes {@code to}; the
     * last of a connection's two relays to finish closes both sockets (an error closes them at once).
     */
    private void relay(Socket from, Socket to, AtomicInteger running) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16 * 1024];
            boolean clean = false;
            try {
                InputStream in = from.getInputStream();
                OutputStream out = to.getOutputStream();
                int n;
                while ((n = in.read(buf)) >= 0) {
                    out.write(buf, 0, n);
                    out.flush();
                }
                to.shutdownOutput();
                clean = true;
            } catch (IOException e) {
                // one side went away: drop the connection
            } finally {
                if (!clean || running.decrementAndGet() == 0) {
                    closeQuietly(from);
                    closeQuietly(to);
                    open.remove(from);
                    open.remove(to);
                }
            }
        }, "loopback-relay");
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    /**
     * Stops listening, then closes every relayed connection. Returns once the listening socket is gone: the JDK
     * leaves a socket that a thread is blocked accepting on to that thread to release when it wakes, so until the
     * accept loop has ended the port still takes connections.
     */
    @Override
    public void close() {
        try {
            server.close();
        } catch (IOException ignored) {
            // already closed
        }
        try {
            accept.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        open.forEach(LoopbackForward::closeQuietly);
        open.clear();
    }
}
