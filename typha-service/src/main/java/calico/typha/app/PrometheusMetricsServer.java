package calico.typha.app;

import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import org.springframework.context.SmartLifecycle;

/**
 * Calico typha's separate metrics endpoint: {@code GET /metrics} on
 * {@code TYPHA_PROMETHEUSMETRICSHOST:TYPHA_PROMETHEUSMETRICSPORT} (default all addresses, 9093),
 * only when {@code TYPHA_PROMETHEUSMETRICSENABLED} is true (Calico's default is false). Serves the
 * same registry as {@code /actuator/prometheus} on the health port, from a small JDK server so
 * that Actuator keeps its one management port (the probes stay on TYPHA_HEALTHPORT). Felix has
 * the same server for FELIX_PROMETHEUSMETRICS*; the two modules share no main code.
 */
public final class PrometheusMetricsServer implements SmartLifecycle {

    private final PrometheusMeterRegistry registry;
    private final String host;
    private final int port;
    private HttpServer server;

    public PrometheusMetricsServer(PrometheusMeterRegistry registry, String host, int port) {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("typha.prometheus-metrics-port (TYPHA_PROMETHEUSMETRICSPORT): " + port
                    + " is not a port number");
        }
        this.registry = registry;
        this.host = host == null ? "" : host.trim();
        this.port = port;
    }

    @Override
    public synchronized void start() {
        try {
            InetSocketAddress address = host.isEmpty() ? new InetSocketAddress(port) : new InetSocketAddress(host, port);
            server = HttpServer.create(address, 16);
        } catch (IOException e) {
            throw new UncheckedIOException("typha.prometheus-metrics-port (TYPHA_PROMETHEUSMETRICSPORT): cannot listen on "
                    + host + ":" + port, e);
        }
        server.createContext("/metrics", exchange -> {
            try (exchange) {
                if (!"GET".equals(exchange.getRequestMethod())) {
                    exchange.sendResponseHeaders(405, -1);
                    return;
                }
                byte[] body = registry.scrape().getBytes(StandardCharsets.UTF_8);
                exchange.getResponseHeaders().add("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
                exchange.sendResponseHeaders(200, body.length);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(body);
                }
            }
        });
        server.start();
    }

    @Override
    public synchronized void stop() {
        if (server != null) {
            server.stop(0);
            server = null;
        }
    }

    @Override
    public synchronized boolean isRunning() {
        return server != null;
    }

    /** {@return the port actually bound} (useful when configured as 0); -1 when not running. */
    public synchronized int boundPort() {
        return server == null ? -1 : server.getAddress().getPort();
    }
}
