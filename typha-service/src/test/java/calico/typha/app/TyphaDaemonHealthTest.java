package calico.typha.app;

import static org.assertj.core.api.Assertions.assertThat;

import calico.libcalico.health.HealthAggregator;
import org.junit.jupiter.api.Test;

/**
 * typha is not ready between its bean being made and its server having started: the health
 * endpoint may already answer then, and an aggregate without reporters says ready (the fault
 * suite saw typha ready ~35 s before it served). That it turns ready once started is
 * {@code TyphaApplicationTest}'s.
 */
class TyphaDaemonHealthTest {

    @Test
    void notReadyUntilTheServerHasStarted() {
        HealthAggregator health = new HealthAggregator();
        assertThat(health.summary().ready()).as("no reporter yet: the trap").isTrue();
        new TyphaDaemon(null, null, null, health, null);
        assertThat(health.summary().ready()).isFalse();
        assertThat(health.status(TyphaDaemon.STARTUP)).get().extracting(s -> s.detail()).isEqualTo("not started");
    }
}
