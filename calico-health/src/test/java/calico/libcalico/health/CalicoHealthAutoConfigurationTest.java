package calico.libcalico.health;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

class CalicoHealthAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(CalicoHealthAutoConfiguration.class));

    /** No properties: aggregator, both probe indicators, metrics binder; felix's defaults. */
    @Test
    void defaultsGiveEveryBean() {
        runner.run(context -> {
            assertThat(context).hasSingleBean(HealthAggregator.class);
            assertThat(context).hasBean(CalicoHealthAutoConfiguration.LIVENESS_INDICATOR);
            assertThat(context).hasBean(CalicoHealthAutoConfiguration.READINESS_INDICATOR);
            assertThat(context).hasSingleBean(HealthMetrics.class);
            assertThat(context.getBean(CalicoHealthProperties.class))
                    .isEqualTo(new CalicoHealthProperties(true, "localhost", 9099));
        });
    }

    /** calico.health.enabled=false: the aggregator stays (components still register), the indicators go. */
    @Test
    void disabledKeepsTheAggregatorButDropsTheIndicators() {
        runner.withPropertyValues("calico.health.enabled=false").run(context -> {
            assertThat(context).hasSingleBean(HealthAggregator.class);
            assertThat(context).doesNotHaveBean(HealthIndicator.class);
        });
    }

    /** Host and port bind, including from Calico-style environment names mapped by a service. */
    @Test
    void propertiesBind() {
        runner.withPropertyValues("TYPHA_HEALTHPORT=9098", "calico.health.port=${TYPHA_HEALTHPORT}", "calico.health.host=0.0.0.0")
                .run(context -> assertThat(context.getBean(CalicoHealthProperties.class))
                        .isEqualTo(new CalicoHealthProperties(true, "0.0.0.0", 9098)));
    }

    /** An out-of-range port fails startup with a message naming the property. */
    @Test
    void badPortFailsNamingTheProperty() {
        runner.withPropertyValues("calico.health.port=70000").run(context -> assertThat(context)
                .getFailure().rootCause().hasMessageContaining("calico.health.port: must be between 0 and 65535, got 70000"));
    }

    /** A user-defined aggregator is used by the indicators instead of a second one. */
    @Test
    void userAggregatorWins() {
        runner.withUserConfiguration(UserAggregator.class).run(context -> {
            assertThat(context).hasSingleBean(HealthAggregator.class);
            assertThat(context.getBean(HealthAggregator.class)).isSameAs(context.getBean("userAggregator"));
            HealthIndicator readiness = context.getBean(CalicoHealthAutoConfiguration.READINESS_INDICATOR, HealthIndicator.class);
            assertThat(readiness.health().getDetails().get("reporters")).asInstanceOf(
                    org.assertj.core.api.InstanceOfAssertFactories.MAP).containsOnlyKeys("FromUser");
        });
    }

    /** A user-defined indicator with the same bean name replaces ours; the other stays. */
    @Test
    void userIndicatorWins() {
        runner.withUserConfiguration(UserIndicator.class).run(context -> {
            assertThat(context.getBean(CalicoHealthAutoConfiguration.LIVENESS_INDICATOR))
                    .isNotInstanceOf(ProbeHealthIndicator.class);
            assertThat(context.getBean(CalicoHealthAutoConfiguration.READINESS_INDICATOR))
                    .isInstanceOf(ProbeHealthIndicator.class);
        });
    }

    /** A Clock bean drives the aggregator's timeouts. */
    @Test
    void clockBeanDrivesTimeouts() {
        FakeClock clock = new FakeClock();
        runner.withBean(Clock.class, () -> clock).run(context -> {
            HealthAggregator aggregator = context.getBean(HealthAggregator.class);
            aggregator.registerReporter("Loop", true, false, Duration.ofSeconds(5)).report(true, false);
            HealthIndicator liveness = context.getBean(CalicoHealthAutoConfiguration.LIVENESS_INDICATOR, HealthIndicator.class);
            assertThat(liveness.health().getStatus()).isEqualTo(Status.UP);

            clock.advance(Duration.ofSeconds(6));

            Health health = liveness.health();
            assertThat(health.getStatus()).isEqualTo(Status.DOWN);
            assertThat(health.getDetails().get("reporters")).isEqualTo(Map.of("Loop", Map.of(
                    "live", false, "state", "timed out", "detail", "", "timeout", "PT5S",
                    "lastReport", "2026-01-01T00:00:00Z")));
        });
    }

    /** Readiness failures are OUT_OF_SERVICE, liveness failures DOWN; each lists only its reporters. */
    @Test
    void indicatorsMapVerdictsToStatuses() {
        runner.run(context -> {
            HealthAggregator aggregator = context.getBean(HealthAggregator.class);
            aggregator.registerReporter("Datastore", false, true, null).report(true, false, "etcd unreachable");
            aggregator.registerReporter("Startup", true, false, null).report(true, true);
            HealthIndicator liveness = context.getBean(CalicoHealthAutoConfiguration.LIVENESS_INDICATOR, HealthIndicator.class);
            HealthIndicator readiness = context.getBean(CalicoHealthAutoConfiguration.READINESS_INDICATOR, HealthIndicator.class);

            assertThat(liveness.health().getStatus()).isEqualTo(Status.UP);
            assertThat(liveness.health().getDetails().get("reporters")).asInstanceOf(
                    org.assertj.core.api.InstanceOfAssertFactories.MAP).containsOnlyKeys("Startup");
            Health ready = readiness.health();
            assertThat(ready.getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
            assertThat(ready.getDetails().get("reporters")).asInstanceOf(
                    org.assertj.core.api.InstanceOfAssertFactories.MAP).containsOnlyKeys("Datastore");
            assertThat(ready.toString()).contains("etcd unreachable", "reporting unhealthy");
        });
    }

    /** Without the health module on the classpath (a non-Actuator user), only the aggregator is made. */
    @Test
    void withoutActuatorHealthOnlyTheAggregator() {
        runner.withClassLoader(new FilteredClassLoader(HealthIndicator.class)).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).hasSingleBean(HealthAggregator.class);
            assertThat(context).doesNotHaveBean(CalicoHealthAutoConfiguration.LIVENESS_INDICATOR);
        });
    }

    /** Without Micrometer, no metrics binder. */
    @Test
    void withoutMicrometerNoMetrics() {
        runner.withClassLoader(new FilteredClassLoader(MeterRegistry.class)).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(HealthMetrics.class);
        });
    }

    /** The binder's gauges follow the aggregator, including reporters registered after binding. */
    @Test
    void metricsFollowReporters() {
        runner.run(context -> {
            HealthAggregator aggregator = context.getBean(HealthAggregator.class);
            HealthReporter early = aggregator.registerReporter("Early", true, true, null);
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            context.getBean(HealthMetrics.class).bindTo(registry);
            HealthReporter late = aggregator.registerReporter("Late", false, true, null);

            early.report(true, true);
            assertThat(registry.get("calico.health.live").gauge().value()).isEqualTo(1.0);
            assertThat(registry.get("calico.health.ready").gauge().value()).isEqualTo(0.0);
            assertThat(registry.get("calico.health.reporter.ready").tag("reporter", "Late").gauge().value()).isEqualTo(0.0);
            assertThat(registry.find("calico.health.reporter.live").tag("reporter", "Late").gauge())
                    .as("Late does not report liveness").isNull();

            late.report(false, true);
            assertThat(registry.get("calico.health.ready").gauge().value()).isEqualTo(1.0);
            assertThat(registry.get("calico.health.reporter.ready").tag("reporter", "Late").gauge().value()).isEqualTo(1.0);
            assertThat(registry.get("calico.health.reporter.live").tag("reporter", "Early").gauge().value()).isEqualTo(1.0);
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class UserAggregator {

        @Bean
        HealthAggregator userAggregator() {
            HealthAggregator aggregator = new HealthAggregator();
            aggregator.registerReporter("FromUser", false, true, null).report(true, true);
            return aggregator;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class UserIndicator {

        @Bean(CalicoHealthAutoConfiguration.LIVENESS_INDICATOR)
        HealthIndicator userLiveness() {
            return () -> Health.up().build();
        }
    }
}
