package calico.controllers.app;

import static org.assertj.core.api.Assertions.assertThat;

import calico.controllers.reconcile.LoopWatch;
import calico.controllers.reconcile.ReconcileLoop;
import calico.libcalico.health.HealthAggregator;
import calico.libcalico.health.ReporterStatus;
import calico.libcalico.testing.Await;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * Each loop reports its own health (real loops, the real aggregator): a loop stuck in a run fails
 * liveness and readiness, a failing one readiness, under its own name, while a loop doing well stays
 * healthy and cannot hide them; {@code healthChecks: Disabled} makes every loop healthy.
 */
class LoopHealthTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @Test
    void aStuckOrFailingLoopFailsTheProbesUnderItsOwnName() throws Exception {
        HealthAggregator aggregator = new HealthAggregator();
        LoopWatch watch = new LoopWatch();
        CountDownLatch release = new CountDownLatch(1);
        Runnable blocks = () -> {
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        try (LoopHealth health = new LoopHealth(aggregator, watch, Duration.ofMillis(300), true, Clock.systemUTC());
             ReconcileLoop good = new ReconcileLoop("good", Duration.ofMillis(100), Duration.ofMillis(100), () -> { }, watch);
             ReconcileLoop bad = new ReconcileLoop("bad", Duration.ofMinutes(5), Duration.ofMillis(100), () -> {
                 throw new IllegalStateException("API server gone");
             }, watch);
             ReconcileLoop stuck = new ReconcileLoop("stuck", Duration.ofMinutes(5), Duration.ofMillis(100), blocks, watch)) {
            good.start();
            bad.start();
            stuck.start();
            health.start();
            ReporterStatus s = Await.value("the stuck loop fails liveness", WAIT, () -> aggregator
                    .status("KubeControllers/stuck").filter(r -> r.detail().startsWith("stuck")));
            assertThat(s.liveness().healthy()).isFalse();
            assertThat(s.readiness().healthy()).isFalse();
            ReporterStatus b = Await.value("the failing loop fails readiness", WAIT, () -> aggregator
                    .status("KubeControllers/bad").filter(r -> r.detail().startsWith("failing")));
            assertThat(b.readiness().healthy()).isFalse();
            assertThat(b.liveness().healthy()).as("failing is not dead").isTrue();
            assertThat(b.detail()).contains("API server gone");
            ReporterStatus g = Await.value("the good loop in sync", WAIT, () -> aggregator
                    .status("KubeControllers/good").filter(r -> r.detail().equals("in sync")));
            assertThat(g.liveness().healthy()).isTrue();
            assertThat(g.readiness().healthy()).isTrue();
            assertThat(aggregator.summary().live()).as("one loop doing well hides no other").isFalse();
            assertThat(aggregator.summary().ready()).isFalse();

            health.enabled(false);
            assertThat(aggregator.summary().live()).as("healthChecks Disabled").isTrue();
            assertThat(aggregator.summary().ready()).isTrue();
            health.enabled(true);
            assertThat(aggregator.summary().ready()).isFalse();

            release.countDown();
            bad.close();
            stuck.close();
            Await.until("loops that stopped are not held against the replica", WAIT, () -> {
                health.check();
                return aggregator.summary().live() && aggregator.summary().ready();
            });
            assertThat(aggregator.status("KubeControllers/bad").orElseThrow().detail()).isEqualTo("not running");
        }
    }
}
