package calico.launcher.faults;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The prober, run inside a demo pod's network namespace ({@code ip netns exec calico-pod-shop-client
 * java -cp launcher.jar calico.launcher.Main probe ...}): every 100 ms one TCP connection that policy
 * allows (ok when the server's answer arrives) and one that policy denies (ok when it does not connect),
 * each printed as a {@link Probe} line. Allowed probes skip the guard band around flow buckets'
 * boundaries ({@link FlowBuckets#inGuardBand}). It stops when its standard input closes (the runner
 * went away) or after {@code limitSeconds}.
 */
final class Prober {

    static final long INTERVAL_MILLIS = 100;
    private static final int TIMEOUT_MILLIS = 1000;
    /** The server forks a shell per connection: on a loaded machine (the CI's two cores) that takes a while. */
    private static final int ANSWER_TIMEOUT_MILLIS = 2000;

    private final InetSocketAddress allowed;
    private final String expect;
    private final InetSocketAddress denied;
    private final PrintStream out;

    Prober(InetSocketAddress allowed, String expect, InetSocketAddress denied, PrintStream out) {
        this.allowed = allowed;
        this.expect = expect;
        this.denied = denied;
        this.out = out;
    }

    void run(InputStream stdin, long limitSeconds) throws InterruptedException {
        ScheduledExecutorService tick = Executors.newSingleThreadScheduledExecutor();
        ExecutorService probes = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "probe");
            t.setDaemon(true);
            return t;
        });
        tick.scheduleAtFixedRate(() -> {
            long at = System.currentTimeMillis();
            probes.execute(() -> {
                // Timed when its thread runs, right before the connect: under load a pool thread can start
                // a second late, and the ledger puts the connection in the bucket of this time.
                long start = System.currentTimeMillis();
                if (!FlowBuckets.GOLDMANE.inGuardBand(start)) {
                    emit(probeAllowed(start));
                }
            });
            probes.execute(() -> emit(probeDenied(at)));
        }, 0, INTERVAL_MILLIS, TimeUnit.MILLISECONDS);
        Thread watchdog = new Thread(() -> {
            try {
                while (stdin.read() >= 0) {
                    // the runner never writes: EOF means it is gone
                }
            } catch (IOException e) {
                // gone too
            }
            tick.shutdownNow();
        }, "stdin");
        watchdog.setDaemon(true);
        watchdog.start();
        tick.awaitTermination(limitSeconds, TimeUnit.SECONDS);
        tick.shutdownNow();
        probes.shutdown();
        probes.awaitTermination(TIMEOUT_MILLIS * 3L, TimeUnit.MILLISECONDS);
    }

    private synchronized void emit(Probe p) {
        out.println(p.line());
        out.flush();
    }

    Probe probeAllowed(long at) {
        try (Socket s = new Socket()) {
            s.connect(allowed, TIMEOUT_MILLIS);
            // Nothing is sent: the demo's socat server hands input to a shell that does not read it, and a
            // write racing the shell's exit ends that connection with EPIPE and no answer.
            s.setSoTimeout(ANSWER_TIMEOUT_MILLIS);
            String answer = new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            boolean ok = answer.contains(expect);
            return new Probe(at, Probe.Kind.ALLOWED, ok, ok ? "answered" : "answer '" + answer + "'");
        } catch (SocketTimeoutException e) {
            return new Probe(at, Probe.Kind.ALLOWED, false, "timeout");
        } catch (IOException e) {
            return new Probe(at, Probe.Kind.ALLOWED, false, String.valueOf(e.getMessage()).replace(' ', '_'));
        }
    }

    Probe probeDenied(long at) {
        try (Socket s = new Socket()) {
            s.connect(denied, TIMEOUT_MILLIS);
            return new Probe(at, Probe.Kind.DENIED, false, "connected");
        } catch (IOException e) {
            return new Probe(at, Probe.Kind.DENIED, true, e instanceof SocketTimeoutException ? "timeout" : "refused");
        }
    }

    /** {@code probe ALLOWED_IP:PORT EXPECTED_ANSWER DENIED_IP:PORT LIMIT_SECONDS}. */
    static int main(java.util.List<String> args, PrintStream out, PrintStream err) {
        if (args.size() != 4) {
            err.println("usage: launcher probe ALLOWED_IP:PORT EXPECTED_ANSWER DENIED_IP:PORT LIMIT_SECONDS");
            return 2;
        }
        try {
            new Prober(address(args.get(0)), args.get(1), address(args.get(2)), out).run(System.in, Long.parseLong(args.get(3)));
            return 0;
        } catch (IllegalArgumentException e) {
            err.println("probe: " + e.getMessage());
            return 2;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 1;
        }
    }

    static InetSocketAddress address(String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException("'" + hostPort + "' is not IP:PORT");
        }
        return new InetSocketAddress(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
    }
}
