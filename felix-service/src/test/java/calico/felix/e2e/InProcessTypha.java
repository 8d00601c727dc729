package calico.felix.e2e;

import calico.libcalico.datastore.Datastore;
import calico.libcalico.health.HealthAggregator;
import calico.typha.server.ServerSettings;
import calico.typha.server.TyphaServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;

/**
 * A real {@link TyphaServer} in process over the test's datastore, which can be stopped and
 * started again on the same port (felix's client reconnects to the address it knows). Each start
 * opens a datastore client of its own; {@link #close} stops the server and closes them all.
 */
final class InProcessTypha implements AutoCloseable {

    private final TestDatastore datastore;
    private final List<Datastore> clients = new ArrayList<>();
    private TyphaServer server;
    private int port;

    InProcessTypha(TestDatastore datastore) {
        this.datastore = datastore;
    }

    /** Starts a typha on {@code port} (0: any free one, then kept for the next start); {@return its port} */
    int start(int port) {
        if (server != null) {
            throw new IllegalStateException("typha already runs on port " + this.port);
        }
        Datastore ds = datastore.open();
        clients.add(ds);
        server = new TyphaServer(ds, ServerSettings.defaults(port).withPort(port), null, new SimpleMeterRegistry(),
                new HealthAggregator(Clock.systemUTC()), "e2e");
        server.start();
        this.port = server.port();
        return this.port;
    }

    /** A new typha on the port of the last one. */
    void restart() {
        start(port);
    }

    /** Stops the running typha (its clients' streams end). */
    void stop() {
        if (server != null) {
            server.close();
            server = null;
        }
    }

    int port() {
        return port;
    }

    /** {@return the clients connected to the running typha}; -1 while stopped */
    int connectionCount() {
        return server == null ? -1 : server.connectionCount();
    }

    @Override
    public void close() throws Exception {
        stop();
        for (int i = clients.size() - 1; i >= 0; i--) {
            clients.get(i).close();
        }
    }
}
