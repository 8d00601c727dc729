package calico.libcalico.health;

import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.springframework.context.SmartLifecycle;

/**
 * Calico's separate metrics endpoint, as felix ({@code FELIX_PROMETHEUSMETRICS*}, 9091) and typha
 * ({@code TYPHA_PROMETHEUSMETRICS*}, 9093) serve it: {@code GET /metrics} on {@code host:port}
 * (empty host: all addresses). It serves the same registry as {@code /actuator/prometheus} on the
 * health port from a small JDK server, so that Actuator keeps its one management port; the
 * component creates it only when its {@code …PROMETHEUSMETRICSENABLED} is true (Calico's default
 * is false). Counters of the component's {@link CalicoMetricTable} are served under Calico's exact
 * names there (no {@code _total} where Calico's has none).
 */
public final class PrometheusMetricsServer extends SideServer implements SmartLifecycle {

    private final PrometheusMeterRegistry registry;
    private final CalicoMetricTable calicoNames;

    public PrometheusMetricsServer(PrometheusMeterRegistry registry, String host, int port, String setting) {
        this(registry, host, port, setting, CalicoMetricTable.none());
    }

    /**
     * @param setting the port setting as errors name it, e.g.
     *                {@code typha.prometheus-metrics-port (TYPHA_PROMETHEUSMETRICSPORT)}
     */
    public PrometheusMetricsServer(PrometheusMeterRegistry registry, String host, int port, String setting,
                                   CalicoMetricTable calicoNames) {
        super(host, port, setting);
        this.registry = registry;
        this.calicoNames = calicoNames;
    }

    @Override
    void serve(HttpServer server) {
        server.createContext("/metrics", HttpAnswers.prometheus(registry, calicoNames));
    }
}
