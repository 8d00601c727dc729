package calico.felix.app;

import calico.felix.dataplane.Dataplane;
import calico.felix.flows.FlowLogs;
import java.util.List;

import calico.libcalico.datastore.config.DatastoreProperties;
import calico.libcalico.health.DebugProfileServer;
import calico.libcalico.health.PrometheusMetricsServer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.logging.LogLevel;
import org.springframework.boot.logging.LoggingSystem;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;

/** Wiring of the felix application; every bean here yields to one the drivers or a test provide. */
@Configuration(proxyBeanMethods = false)
public class FelixConfiguration {

    /** Felix's names for the shared datastore settings: {@code felix.*}, {@code FELIX_DATASTORETYPE} over {@code DATASTORE_TYPE}. */
    static final DatastoreProperties.Source DATASTORE = DatastoreProperties.Source.of("felix", "FELIX_");

    /** The datastore felix reads, or that typha reads for it; checked at start-up. */
    @Bean
    DatastoreProperties felixDatastore(Environment environment) {
        return DatastoreProperties.bind(environment, DATASTORE);
    }

    @Bean
    FelixEnvironment felixEnvironment(ConfigurableEnvironment environment) {
        return FelixEnvironment.from(environment);
    }

    /**
     * Calico's screen log level ({@code FELIX_LOGSEVERITYSCREEN}: Trace/Debug/Info/Warning/Error/Fatal)
     * applied to the {@code calico} loggers at start-up, from the typed settings that own it.
     */
    @Bean
    FelixLogLevel felixLogLevel(FelixEnvironment environment, ObjectProvider<LoggingSystem> logging) {
        return new FelixLogLevel(environment.settings().logSeverityScreen(), logging.getIfAvailable());
    }

    /** The dataplane and flow logs beside it; the admin API and metrics read the dataplane's model. */
    @Bean
    ProgrammedState programmedState(Dataplane dataplane, ObjectProvider<FlowLogs> flowLogs, FelixMetricsPort metricsPort,
                                    FelixStatusReporter statusReporter) {
        FlowLogs f = flowLogs.getIfAvailable();
        return f == null ? ProgrammedState.of(dataplane, List.of(metricsPort::onBatch, statusReporter::onBatch))
                : ProgrammedState.of(dataplane, List.of(f::apply, metricsPort::onBatch, statusReporter::onBatch));
    }

    /**
     * Calico's status reports into the datastore every {@code reportingInterval}, with a client of their own;
     * only etcd keeps them (the other datastores drop them, as Calico's), so no client is opened elsewhere.
     */
    @Bean(destroyMethod = "close")
    FelixStatusReporter felixStatusReporter(FelixProperties properties, DatastoreProperties felixDatastore) {
        boolean kept = felixDatastore.type() == calico.libcalico.datastore.config.DatastoreConfig.Type.ETCDV3;
        return new FelixStatusReporter(properties.hostname(), kept ? () -> felixDatastore.toConfig().open() : null,
                java.time.Clock.systemUTC());
    }

    /**
     * Calico's metrics port as {@code prometheusMetricsEnabled} resolves (environment, then FelixConfiguration):
     * the server below when the environment enables it, else one made when a resource does.
     */
    @Bean
    FelixMetricsPort felixMetricsPort(ObjectProvider<PrometheusMetricsServer> started,
                                      ObjectProvider<PrometheusMeterRegistry> registry, Environment env) {
        return new FelixMetricsPort(started.getIfAvailable(), () -> metricsServer(registry, env));
    }

    @Bean
    FelixMetrics felixMetrics(ObjectProvider<MeterRegistry> registry, ProgrammedState state) {
        return new FelixMetrics(registry.getIfAvailable(SimpleMeterRegistry::new), state.model());
    }

    /** Calico's metrics port, beside the health port's /actuator/prometheus; off unless enabled. */
    @Bean
    @ConditionalOnProperty(name = "felix.prometheus-metrics-enabled", havingValue = "true")
    PrometheusMetricsServer prometheusMetricsServer(ObjectProvider<PrometheusMeterRegistry> registry,
                                                    Environment env) {
        return metricsServer(registry, env);
    }

    private static PrometheusMetricsServer metricsServer(ObjectProvider<PrometheusMeterRegistry> registry,
                                                         Environment env) {
        // Resolved here, not by @ConditionalOnBean: Actuator's registry is defined after this class.
        PrometheusMeterRegistry prometheus = registry.getIfAvailable();
        if (prometheus == null) {
            throw new IllegalStateException("felix.prometheus-metrics-enabled (FELIX_PROMETHEUSMETRICSENABLED): "
                    + "no Prometheus registry (is micrometer-registry-prometheus on the classpath?)");
        }
        return new PrometheusMetricsServer(prometheus, env.getProperty("felix.prometheus-metrics-host", ""),
                env.getProperty("felix.prometheus-metrics-port", Integer.class, 9091),
                "felix.prometheus-metrics-port (FELIX_PROMETHEUSMETRICSPORT)", FelixCalicoMetrics.TABLE);
    }

    /**
     * Calico's debug port (FELIX_DEBUGPORT, on FELIX_DEBUGHOST, localhost by default): threads, heap histogram
     * and a JFR profile on Go's pprof paths. Off unless a port is set: any value but 0 (or none) turns it on, and
     * the server refuses a bad one, naming the variable.
     */
    @Bean
    @ConditionalOnSetting(name = "felix.debug-port", matches = "(?s)(?!\\s*0*\\s*$).*")
    DebugProfileServer debugProfileServer(Environment env) {
        return new DebugProfileServer(env.getProperty("felix.debug-host", "localhost"),
                env.getProperty("felix.debug-port", Integer.class, 0), "felix.debug-port (FELIX_DEBUGPORT)");
    }

    /** A record of a log level change, so the choice is visible (and testable) as a bean. */
    public record FelixLogLevel(String severity, LogLevel level) {
        FelixLogLevel(String severity, LoggingSystem logging) {
            this(severity, toLevel(severity));
            if (logging != null) {
                logging.setLogLevel("calico", level);
            }
        }

        static LogLevel toLevel(String severity) {
            return switch (severity) {
                case "Trace" -> LogLevel.TRACE;
                case "Debug" -> LogLevel.DEBUG;
                case "Info" -> LogLevel.INFO;
                case "Warning" -> LogLevel.WARN;
                case "Error" -> LogLevel.ERROR;
                default -> LogLevel.FATAL;
            };
        }
    }
}
