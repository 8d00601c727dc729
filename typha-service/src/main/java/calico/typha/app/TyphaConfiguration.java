package calico.typha.app;

import calico.libcalico.datastore.config.DatastoreProperties;
import calico.libcalico.health.PrometheusMetricsServer;
import calico.typha.server.TyphaCalicoMetrics;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/** Typha's beans beyond the daemon: the datastore settings and Calico's separate Prometheus port. */
@Configuration(proxyBeanMethods = false)
class TyphaConfiguration {

    /** Typha's names for the shared datastore settings: {@code typha.*}, {@code TYPHA_DATASTORETYPE} over {@code DATASTORE_TYPE}. */
    static final DatastoreProperties.Source DATASTORE = DatastoreProperties.Source.of("typha", "TYPHA_");

    /** The datastore typha watches; checked at start-up. */
    @Bean
    DatastoreProperties typhaDatastore(Environment environment) {
        return DatastoreProperties.bind(environment, DATASTORE);
    }

    /** Calico's metrics port (TYPHA_PROMETHEUSMETRICSPORT, 9093), beside the health port's /actuator/prometheus. */
    @Bean
    @ConditionalOnProperty(name = "typha.prometheus-metrics-enabled", havingValue = "true")
    PrometheusMetricsServer prometheusMetricsServer(ObjectProvider<PrometheusMeterRegistry> registry,
                                                    TyphaMetricsProperties properties) {
        // Resolved here, not by @ConditionalOnBean: Actuator's registry is defined after this class.
        PrometheusMeterRegistry prometheus = registry.getIfAvailable();
        if (prometheus == null) {
            throw new IllegalStateException("typha.prometheus-metrics-enabled (TYPHA_PROMETHEUSMETRICSENABLED): "
                    + "no Prometheus registry (is micrometer-registry-prometheus on the classpath?)");
        }
        return new PrometheusMetricsServer(prometheus, properties.prometheusMetricsHost(),
                properties.prometheusMetricsPort(),
                "typha.prometheus-metrics-port (TYPHA_PROMETHEUSMETRICSPORT)", TyphaCalicoMetrics.TABLE);
    }
}
