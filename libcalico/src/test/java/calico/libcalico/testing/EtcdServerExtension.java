package calico.libcalico.testing;

import java.net.URI;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Runs one real etcd for a test class. Register it on a static field so that tests can stop,
 * restart and compact it:
 *
 * <pre>{@code
 * @RegisterExtension
 * static final EtcdServerExtension ETCD = new EtcdServerExtension();
 *
 * @Test
 * void survivesOutage() {
 *     ETCD.stop();
 *     ...
 *     ETCD.start();
 * }
 * }</pre>
 *
 * <p>It also injects {@link EtcdServer} (or its endpoint {@link URI}) into test and lifecycle
 * method parameters. etcd starts before the first test and is killed, with its data directory
 * deleted, after the last. Tests share the server, so each should use its own names (or its
 * own key prefix) rather than expect an empty store. A test that stops etcd must start it again
 * (or leave that to {@link #ensureRunning()} in a {@code @BeforeEach}).
 */
public final class EtcdServerExtension implements BeforeAllCallback, AfterAllCallback, ParameterResolver {

    private EtcdServer server;

    @Override
    public void beforeAll(ExtensionContext context) {
        if (server == null) {
            server = EtcdServer.startOnTmpfs();
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (server != null) {
            server.close();
            server = null;
        }
    }

    public EtcdServer server() {
        if (server == null) {
            throw new IllegalStateException("etcd is not running: register EtcdServerExtension on a static field");
        }
        return server;
    }

    public URI endpoint() {
        return server().endpoint();
    }

    /** Kills etcd (an abrupt outage). */
    public void stop() {
        server().stop();
    }

    /** Starts a stopped etcd again, same ports and data, and waits until it is healthy. */
    public void start() {
        server().start();
    }

    /** Freezes etcd (SIGSTOP): connections stay open, nothing answers. */
    public void freeze() {
        server().freeze();
    }

    public void thaw() {
        server().thaw();
    }

    public void restart() {
        server().restart();
    }

    /** Starts etcd if an earlier test left it stopped. */
    public void ensureRunning() {
        server().start();
    }

    /** Compacts all history before the current revision; {@return the compaction revision}. */
    public long compact() {
        return server().compact();
    }

    @Override
    public boolean supportsParameter(ParameterContext p, ExtensionContext e) {
        Class<?> t = p.getParameter().getType();
        return t == EtcdServer.class || t == URI.class;
    }

    @Override
    public Object resolveParameter(ParameterContext p, ExtensionContext e) {
        return p.getParameter().getType() == URI.class ? endpoint() : server();
    }
}
