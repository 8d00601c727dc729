package calico.felix.app;

import calico.felix.calc.DataplaneUpdate;
import calico.libcalico.health.PrometheusMetricsServer;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Calico's metrics port following {@code prometheusMetricsEnabled} as each effective configuration resolves it
 * ({@code FELIX_PROMETHEUSMETRICSENABLED} over the FelixConfiguration resources): turned on, the port
 * ({@code FELIX_PROMETHEUSMETRICSPORT}/{@code …HOST}, read at start-up) listens; turned off, it closes. Enabled by
 * the environment, the server is the one Spring started with felix and the environment keeps it on. Fed every
 * batch on the syncer's thread; a port that cannot be bound is logged and tried again at the next change.
 */
public final class FelixMetricsPort {

    private static final Logger log = LoggerFactory.getLogger(FelixMetricsPort.class);

    private final Supplier<PrometheusMetricsServer> create;
    private PrometheusMetricsServer server;

    /**
     * @param started the server Spring started because the environment enables it, or null
     * @param create  makes the server when a resource first enables it
     */
    FelixMetricsPort(PrometheusMetricsServer started, Supplier<PrometheusMetricsServer> create) {
        this.server = started;
        this.create = create;
    }

    /** Follows the last ConfigUpdate of {@code batch}, if it has one. */
    void onBatch(List<DataplaneUpdate> batch) {
        calico.felix.calc.FelixSettings s = ProgrammedState.lastConfig(batch);
        if (s != null) {
            follow(s.prometheusMetricsEnabled());
        }
    }

    /** Opens ({@code true}) or closes the metrics port. */
    synchronized void follow(boolean enabled) {
        if (enabled && (server == null || !server.isRunning())) {
            try {
                if (server == null) {
                    server = create.get();
                }
                server.start();
                log.info("prometheusMetricsEnabled: Calico's metrics port listens on {}", server.boundPort());
            } catch (RuntimeException e) {
                log.warn("prometheusMetricsEnabled: {}", e.getMessage());
            }
        } else if (!enabled && server != null && server.isRunning()) {
            server.stop();
            log.info("prometheusMetricsEnabled: false, Calico's metrics port closed");
        }
    }

    /** {@return the port the metrics listen on}, -1 while closed. */
    public synchronized int boundPort() {
        return server == null ? -1 : server.boundPort();
    }
}
