package calico.libcalico.health;

import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Gives every service one {@link HealthAggregator} and serves it through Actuator.
 *
 * <pre>
 *  reporters ──report()──► HealthAggregator ──► calicoLiveness  ──► group "liveness"  ──► /liveness
 *                                   │       └─► calicoReadiness ──► group "readiness" ──► /readiness
 *                                   └─► HealthMetrics (gauges) ──► /actuator/prometheus
 * </pre>
 *
 * The groups, their paths and the management port are defaults set by
 * {@link CalicoHealthEnvironmentPostProcessor}. The aggregator exists even when
 * {@code calico.health.enabled=false}, so components can always register reporters; only the
 * indicators (and so the probe endpoints) go away. Every bean yields to one the user defines.
 */
@AutoConfiguration
@EnableConfigurationProperties(CalicoHealthProperties.class)
class CalicoHealthAutoConfiguration {

    /** Bean names, and so Actuator contributor names minus the "HealthIndicator" suffix. */
    static final String LIVENESS_INDICATOR = "calicoLivenessHealthIndicator";
    static final String READINESS_INDICATOR = "calicoReadinessHealthIndicator";

    @Bean
    @ConditionalOnMissingBean
    HealthAggregator healthAggregator(ObjectProvider<Clock> clock) {
        // A Clock bean, when there is one, lets tests move time.
        return new HealthAggregator(clock.getIfAvailable(Clock::systemUTC));
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(HealthIndicator.class)
    @ConditionalOnCalicoHealthEnabled
    static class ProbeIndicators {

        @Bean(LIVENESS_INDICATOR)
        @ConditionalOnMissingBean(name = LIVENESS_INDICATOR)
        ProbeHealthIndicator calicoLivenessHealthIndicator(HealthAggregator aggregator) {
            return new ProbeHealthIndicator(aggregator, Probe.LIVENESS);
        }

        @Bean(READINESS_INDICATOR)
        @ConditionalOnMissingBean(name = READINESS_INDICATOR)
        ProbeHealthIndicator calicoReadinessHealthIndicator(HealthAggregator aggregator) {
            return new ProbeHealthIndicator(aggregator, Probe.READINESS);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    static class Metrics {

        @Bean
        @ConditionalOnMissingBean
        HealthMetrics calicoHealthMetrics(HealthAggregator aggregator) {
            return new HealthMetrics(aggregator);
        }
    }
}
