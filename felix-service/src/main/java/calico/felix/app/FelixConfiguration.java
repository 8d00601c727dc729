package calico.felix.app;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.logging.LogLevel;
import org.springframework.boot.logging.LoggingSystem;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.ConfigurableEnvironment;

/** Wiring of the felix application; every bean here yields to one the drivers or a test provide. */
@Configuration(proxyBeanMethods = false)
public class FelixConfiguration {

    @Bean
    FelixEnvironment felixEnvironment(ConfigurableEnvironment environment) {
        return FelixEnvironment.from(environment);
    }

    /** Calico's screen log level applied to the {@code calico} loggers (Trace/Debug/Info/Warning/Error/Fatal). */
    @Bean
    FelixLogLevel felixLogLevel(FelixProperties properties, ObjectProvider<LoggingSystem> logging) {
        return new FelixLogLevel(properties.logSeverityScreen(), logging.getIfAvailable());
    }

    /** What is programmed, for the admin API and metrics: the model itself, or a mirror beside a real driver. */
    @Bean
    ProgrammedState programmedState(Dataplane dataplane) {
        return ProgrammedState.of(dataplane);
    }

    @Bean
    FelixMetrics felixMetrics(ObjectProvider<MeterRegistry> registry, ProgrammedState state) {
        return new FelixMetrics(registry.getIfAvailable(SimpleMeterRegistry::new), state.model());
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
