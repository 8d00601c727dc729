package calico.libcalico.health;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;

/**
 * A small JDK HTTP server on a port of its own, beside Actuator's one management port: Calico serves
 * metrics and debug profiles on ports that operators configure separately; a plain main (no Spring)
 * serves its probes and endpoints from one ({@link PathServer}). Bound on {@link #start()}, with the
 * setting that names the port in every error. No Spring type here: the servers Spring starts add its
 * {@code SmartLifecycle} themselves, so a plain main loads none of Spring.
 */
public abstract sealed class SideServer permits PrometheusMetricsServer, DebugProfileServer, PathServer {

    private final String host;
    private final int port;
    private final String setting;
    private HttpServer server;

    /** @param setting the port setting as errors name it */
    SideServer(String host, int port, String setting) {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException(setting + ": " + port + " is not a port number");
        }
        this.host = host == null ? "" : host.trim();
        this.port = port;
        this.setting = setting;
    }

    /** Adds the server's contexts. */
    abstract void serve(HttpServer server);

    /** Binds the port and serves; an error names the port setting. */
    public synchronized void start() {
        try {
            InetSocketAddress address = host.isEmpty() ? new InetSocketAddress(port) : new InetSocketAddress(host, port);
            server = HttpServer.create(address, 16);
        } catch (IOException e) {
            throw new UncheckedIOException(setting + ": cannot listen on " + host + ":" + port, e);
        }
        serve(server);
        server.start();
    }

    /** Stops serving at once (no grace for exchanges in flight). */
    public synchronized void stop() {
        if (server != null) {
            server.stop(0);
            server = null;
        }
    }

    /** {@return whether the port is bound} */
    public synchronized boolean isRunning() {
        return server != null;
    }

    /** {@return the port actually bound} (useful when configured as 0); -1 when not running. */
    public synchronized int boundPort() {
        return server == null ? -1 : server.getAddress().getPort();
    }

    /** Sends {@code body} with status {@code status}. */
    static void send(HttpExchange exchange, int status, String contentType, byte[] body) throws IOException {
        exchange.getResponseHeaders().add("Content-Type", contentType);
        exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }
}
