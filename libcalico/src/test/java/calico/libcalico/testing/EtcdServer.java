package calico.libcalico.testing;

import calico.controlplane.Owned;
import calico.controlplane.Tethered;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real single-member etcd (the distribution's {@code /usr/bin/etcd}) on free loopback ports,
 * with its data in a fresh temporary directory. It can be stopped and started again on the same
 * ports and data (outage tests) and compacted (compaction tests). {@link #close()} kills it and
 * deletes the directory.
 *
 * <p>Used by {@link EtcdServerExtension} and by benchmarks that start their own etcd.
 */
public final class EtcdServer implements AutoCloseable {

    /** The binary; {@code ETCD_BINARY} overrides it. */
    public static final Path BINARY = Path.of(System.getenv().getOrDefault("ETCD_BINARY", "/usr/bin/etcd"));

    private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(20);

    private final Path dataDir;
    private final Path logFile;
    private final TestCertificates tls;
    private int clientPort;
    private int peerPort;
    private int metricsPort; // plain-HTTP /health, also when clients must use TLS
    private Process process;

    // Kills etcd if the JVM exits without close() (e.g. a test run interrupted by Ctrl-C).
    private final Thread killOnExit = new Thread(this::killQuietly, "etcd-test-kill");

    private EtcdServer(Path dataDir, TestCertificates tls) {
        this.dataDir = dataDir;
        this.tls = tls;
        this.logFile = dataDir.resolveSibling(dataDir.getFileName() + ".log");
        Runtime.getRuntime().addShutdownHook(killOnExit);
    }

    private synchronized void killQuietly() {
        if (process != null) {
            process.destroyForcibly();
        }
    }

    /** Starts etcd with its data on tmpfs ({@code /dev/shm}) when there is one: tests want speed, not durability. */
    public static EtcdServer startOnTmpfs() {
        Path shm = Path.of("/dev/shm");
        return start(Files.isDirectory(shm) && Files.isWritable(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir")));
    }

    /** Starts etcd with its data directory under {@code parent} (a real disk for realistic benchmark figures). */
    public static EtcdServer start(Path parent) {
        return start(parent, null);
    }

    /**
     * Starts etcd serving clients over TLS with the server certificate from {@code tls}, and
     * requiring client certificates signed by its CA. {@link #compact()} is not available then.
     */
    public static EtcdServer startTls(TestCertificates tls) {
        Path shm = Path.of("/dev/shm");
        return start(Files.isDirectory(shm) && Files.isWritable(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir")), tls);
    }

    private static EtcdServer start(Path parent, TestCertificates tls) {
        requireBinary();
        // Owned: the next start removes what a killed JVM left (etcd's two preallocated WAL files: 128 MB of tmpfs).
        Path dir = Owned.directory(parent, "etcd-test");
        EtcdServer server = new EtcdServer(dir.resolve("data"), tls);
        try {
            server.startOnFreePorts();
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
        return server;
    }

    static void requireBinary() {
        if (!Files.isExecutable(BINARY)) {
            throw new IllegalStateException(BINARY + " not found: tests need a real etcd. Run ./scripts/test.sh, "
                    + "which installs Debian's etcd-server, or set ETCD_BINARY to an etcd 3.4+ binary.");
        }
    }

    /** {@return the client URL}, e.g. {@code http://127.0.0.1:40123}. */
    public URI endpoint() {
        return URI.create((tls == null ? "http" : "https") + "://127.0.0.1:" + clientPort);
    }

    /** {@return etcd's pid while it runs} */
    synchronized long pid() {
        return process.pid();
    }

    /** {@return the directory this server owns: its data and log} */
    Path directory() {
        return dataDir.getParent();
    }

    public synchronized boolean running() {
        return process != null && process.isAlive();
    }

    /** Stops etcd (SIGKILL: an abrupt outage, as when a host dies) and waits for it to exit. */
    public synchronized void stop() {
        if (process == null) {
            return;
        }
        process.destroyForcibly();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("etcd pid " + process.pid() + " did not exit after SIGKILL");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while stopping etcd", e);
        }
        process = null;
    }

    /** Starts a stopped etcd again on the same ports with the same data, and waits until it is healthy. */
    public synchronized void start() {
        if (running()) {
            return;
        }
        launch();
        awaitHealthy();
    }

    /** Freezes etcd with SIGSTOP: it keeps its connections open but answers nothing (a hung host). */
    public synchronized void freeze() {
        signal("STOP");
    }

    /** Resumes a frozen etcd with SIGCONT. */
    public synchronized void thaw() {
        signal("CONT");
    }

    private void signal(String sig) {
        if (process == null) {
            throw new IllegalStateException("etcd is not running");
        }
        try {
            Process kill = new ProcessBuilder("kill", "-" + sig, Long.toString(process.pid())).inheritIO().start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + sig + " " + process.pid() + " failed");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    public void restart() {
        stop();
        start();
    }

    /** Compacts away all history before the current revision; {@return the compaction revision}. */
    public long compact() {
        return EtcdAdmin.compact(endpoint());
    }

    @Override
    public synchronized void close() {
        if (process != null) {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            process = null;
        }
        Owned.deleteTree(directory());
        try {
            Runtime.getRuntime().removeShutdownHook(killOnExit);
        } catch (IllegalStateException e) {
            // already shutting down
        }
    }

    private void startOnFreePorts() {
        // Another process may grab a port between our probe and etcd's bind: retry with new ports.
        IllegalStateException last = null;
        for (int attempt = 0; attempt < 5; attempt++) {
            clientPort = freePort();
            peerPort = freePort();
            metricsPort = freePort();
            launch();
            try {
                awaitHealthy();
                return;
            } catch (IllegalStateException e) {
                last = e;
                stop();
            }
        }
        throw last;
    }

    private void launch() {
        String client = endpoint().toString();
        String peer = "http://127.0.0.1:" + peerPort;
        List<String> cmd = new ArrayList<>(List.of(BINARY.toString(),
                "--name", "default",
                "--data-dir", dataDir.toString(),
                "--listen-client-urls", client,
                "--advertise-client-urls", client,
                "--listen-peer-urls", peer,
                "--initial-advertise-peer-urls", peer,
                "--initial-cluster", "default=" + peer,
                "--listen-metrics-urls", "http://127.0.0.1:" + metricsPort,
                "--logger", "zap",
                "--log-level", "warn"));
        if (tls != null) {
            cmd.addAll(List.of("--cert-file", tls.serverCert().toString(), "--key-file", tls.serverKey().toString(),
                    "--client-cert-auth", "--trusted-ca-file", tls.caCert().toString()));
        }
        // Tethered: etcd dies with this JVM even when a SIGKILL leaves the shutdown hook unrun.
        process = Tethered.start(new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile())));
    }

    private void awaitHealthy() {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        HttpRequest health = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metricsPort + "/health"))
                .timeout(Duration.ofSeconds(2)).build();
        try {
            Await.until("etcd at " + endpoint() + " healthy", STARTUP_TIMEOUT, () -> {
                if (!process.isAlive()) {
                    throw new IllegalStateException("etcd exited with " + process.exitValue() + " during startup:\n"
                            + logTail());
                }
                try {
                    HttpResponse<String> r = http.send(health, HttpResponse.BodyHandlers.ofString());
                    return r.statusCode() == 200 && r.body().contains("\"health\":\"true\"");
                } catch (IOException e) {
                    return false; // not listening yet
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while waiting for etcd", e);
                }
            });
        } catch (AssertionError e) {
            throw new IllegalStateException(e.getMessage() + ":\n" + logTail(), e);
        }
    }

    private String logTail() {
        try {
            List<String> lines = Files.readAllLines(logFile);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free loopback port", e);
        }
    }
}
