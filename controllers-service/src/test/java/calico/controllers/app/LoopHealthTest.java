package calico.controllers.app;

import static org.assertj.core.api.Assertions.assertThat;

import calico.controllers.reconcile.LoopStatus;
import calico.controllers.reconcile.LoopWatch;
import calico.controllers.reconcile.ReconcileLoop;
import calico.libcalico.health.HealthAggregator;
import calico.libcalico.health.ReporterStatus;
import calico.libcalico.testing.Await;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
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

    /**
     * A long run that keeps moving on (the loadbalancer's first run over thousands of Services) is not
     * stuck, however long it lasts; once it stops moving on for longer than {@code stuckAfter}, it is.
     */
    @Test
    void aLongRunThatMovesOnIsNotStuckUntilItStops() throws Exception {
        HealthAggregator aggregator = new HealthAggregator();
        LoopWatch watch = new LoopWatch();
        AtomicReference<ReconcileLoop> self = new AtomicReference<>();
        AtomicInteger steps = new AtomicInteger();
        CountDownLatch stall = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Runnable longRun = () -> {
            try {
                while (!stall.await(20, TimeUnit.MILLISECONDS)) { // a piece of work every 20 ms
                    self.get().progressed();
                    steps.incrementAndGet();
                }
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        Duration stuckAfter = Duration.ofMillis(300);
        try (LoopHealth health = new LoopHealth(aggregator, watch, stuckAfter, true, Clock.systemUTC());
             ReconcileLoop busy = new ReconcileLoop("busy", Duration.ofMinutes(5), Duration.ofMillis(100), longRun, watch)) {
            self.set(busy);
            busy.start();
            Await.until("the run has lasted four times stuckAfter", WAIT, () -> {
                LoopStatus st = busy.status();
                return st.runningSince() != null && Duration.between(st.runningSince(), Instant.now())
                        .compareTo(stuckAfter.multipliedBy(4)) > 0 && steps.get() > 0;
            });
            health.check();
            ReporterStatus moving = aggregator.status("KubeControllers/busy").orElseThrow();
            assertThat(moving.detail()).isEqualTo("first run under way");
            assertThat(moving.liveness().healthy()).isTrue();

            stall.countDown();
            ReporterStatus stuck = Await.value("stuck once it stopped moving on", WAIT, () -> {
                health.check();
                return aggregator.status("KubeControllers/busy").filter(r -> r.detail().startsWith("stuck"));
            });
            assertThat(stuck.liveness().healthy()).isFalse();
            assertThat(stuck.detail()).contains("has not moved on since");
            String first = stuck.detail();
            health.check();
            assertThat(aggregator.status("KubeControllers/busy").orElseThrow().detail())
                    .as("the same text while nothing changes (each change is logged)").isEqualTo(first);
            release.countDown();
        }
    }
}
