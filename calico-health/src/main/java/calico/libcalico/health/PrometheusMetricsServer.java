package calico.libcalico.health;

import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import org.springframework.context.SmartLifecycle;

/**
 * Calico's separate metrics endpoint, as felix ({@code FELIX_PROMETHEUSMETRICS*}, 9091) and typha
 * ({@code TYPHA_PROMETHEUSMETRICS*}, 9093) serve it: {@code GET /metrics} on {@code host:port}
 * (empty host: all addresses). It serves the same registry as {@code /actuator/prometheus} on the
 * health port from a small JDK server, so that Actuator keeps its one management port; the
 * component creates it only when its {@code …PROMETHEUSMETRICSENABLED} is true (Calico's default
 * is false).
 */
public final class PrometheusMetricsServer implements SmartLifecycle {

    private final PrometheusMeterRegistry registry;
    private final String host;
    private final int port;
    private final String setting;
    private HttpServer server;

    /**
     * @param setting the port setting as errors name it, e.g.
     *                {@code typha.prometheus-metrics-port (TYPHA_PROMETHEUSMETRICSPORT)}
     */
    public PrometheusMetricsServer(PrometheusMeterRegistry registry, String host, int port, String setting) {
        this.setting = setting;
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException(setting + ": " + port + " is not a port number");
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
            throw new UncheckedIOException(setting + ": cannot listen on " + host + ":" + port, e);
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
