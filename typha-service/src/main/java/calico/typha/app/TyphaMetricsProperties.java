package calico.typha.app;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Calico typha's separate Prometheus endpoint ({@code application.yml} maps the TYPHA_* names).
 *
 * @param prometheusMetricsEnabled serve {@code /metrics} on its own port (TYPHA_PROMETHEUSMETRICSENABLED)
 * @param prometheusMetricsHost    listen address, empty for all (TYPHA_PROMETHEUSMETRICSHOST)
 * @param prometheusMetricsPort    (TYPHA_PROMETHEUSMETRICSPORT, 9093 as in Calico)
 */
@ConfigurationProperties(prefix = "typha")
public record TyphaMetricsProperties(
        @DefaultValue("false") boolean prometheusMetricsEnabled,
        @DefaultValue("") String prometheusMetricsHost,
        @DefaultValue("9093") int prometheusMetricsPort) {

    public TyphaMetricsProperties {
        if (prometheusMetricsPort < 0 || prometheusMetricsPort > 65535) {
            throw new IllegalArgumentException("typha.prometheus-metrics-port (TYPHA_PROMETHEUSMETRICSPORT): "
                    + prometheusMetricsPort + " is not a port number");
        }
        prometheusMetricsHost = prometheusMetricsHost == null ? "" : prometheusMetricsHost.trim();
    }
}
