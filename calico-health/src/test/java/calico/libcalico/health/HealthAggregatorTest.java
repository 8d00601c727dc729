package calico.libcalico.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class HealthAggregatorTest {

    private final FakeClock clock = new FakeClock();
    private final HealthAggregator aggregator = new HealthAggregator(clock);

    @Test
    void noReportersMeansLiveAndReady() {
        HealthSummary summary = aggregator.summary();

        assertThat(summary.live()).isTrue();
        assertThat(summary.ready()).isTrue();
        assertThat(summary.reporters()).isEmpty();
    }

    @Test
    void aReporterThatNeverReportedIsNeitherLiveNorReady() {
        aggregator.registerReporter("Startup", true, true, null);

        HealthSummary summary = aggregator.summary();

        assertThat(summary.live()).isFalse();
        assertThat(summary.ready()).isFalse();
        ReporterStatus status = summary.reporters().get(0);
        assertThat(status.liveness()).isEqualTo(Verdict.NEVER_REPORTED);
        assertThat(status.readiness()).isEqualTo(Verdict.NEVER_REPORTED);
        assertThat(status.lastReport()).isNull();
        assertThat(status.detail()).isEmpty();
    }

    @Test
    void aNeverReportedReporterOnlyFailsTheKindsItDeclared() {
        aggregator.registerReporter("ReadyOnly", false, true, Duration.ofSeconds(10));

        HealthSummary summary = aggregator.summary();

        assertThat(summary.live()).isTrue();
        assertThat(summary.ready()).isFalse();
        assertThat(summary.reporters().get(0).liveness()).isEqualTo(Verdict.NOT_APPLICABLE);
    }

    /** Each row: what two reporters (A live+ready, B live only, C ready only) said, and the overall result. */
    @ParameterizedTest(name = "A={0}/{1} B={2} C={3} -> live={4} ready={5}")
    @CsvSource({
        // A.live, A.ready, B.live, C.ready, live, ready
        "true,  true,  true,  true,  true,  true",
        "false, true,  true,  true,  false, true",
        "true,  false, true,  true,  true,  false",
        "true,  true,  false, true,  false, true",
        "true,  true,  true,  false, true,  false",
        "false, false, false, false, false, false",
    })
    void liveAndReadyAreConjunctionsOverTheReportersThatReportThem(
            boolean aLive, boolean aReady, boolean bLive, boolean cReady, boolean live, boolean ready) {
        HealthReporter a = aggregator.registerReporter("A", true, true, null);
        HealthReporter b = aggregator.registerReporter("B", true, false, null);
        HealthReporter c = aggregator.registerReporter("C", false, true, null);

        a.report(aLive, aReady);
        // B and C also send the kind they did not declare, as the opposite of the outcome
        // expected, to prove undeclared kinds never count.
        b.report(bLive, !ready);
        c.report(!live, cReady);

        HealthSummary summary = aggregator.summary();
        assertThat(summary.live()).isEqualTo(live);
        assertThat(summary.ready()).isEqualTo(ready);
        assertThat(summary.healthy(Probe.LIVENESS)).isEqualTo(live);
        assertThat(summary.healthy(Probe.READINESS)).isEqualTo(ready);
    }

    @Test
    void aSilentReporterTimesOutStrictlyAfterItsTimeoutAndRecoversByReporting() {
        HealthReporter loop = aggregator.registerReporter("Loop", true, true, Duration.ofSeconds(20));
        loop.report(true, true, "all good");

        clock.advance(Duration.ofSeconds(20));
        assertThat(aggregator.summary().live()).as("exactly at the timeout").isTrue();

        clock.advance(Duration.ofMillis(1));
        HealthSummary stale = aggregator.summary();
        assertThat(stale.live()).isFalse();
        assertThat(stale.ready()).isFalse();
        assertThat(stale.reporters().get(0).liveness()).isEqualTo(Verdict.TIMED_OUT);
        assertThat(stale.reporters().get(0).readiness()).isEqualTo(Verdict.TIMED_OUT);
        assertThat(stale.reporters().get(0).detail()).as("the last detail is kept").isEqualTo("all good");

        loop.report(true, true);
        assertThat(aggregator.summary().live()).isTrue();
        assertThat(aggregator.summary().ready()).isTrue();
    }

    @Test
    void aTimeoutOverrideReplacesTheRegisteredTimeoutNowAndForLaterReportersUntilItIsDropped() {
        HealthReporter loop = aggregator.registerReporter("Loop", true, true, Duration.ofSeconds(20));
        loop.report(true, true);
        assertThat(aggregator.overrideTimeouts(Map.of("Loop", Duration.ofSeconds(60), "Later", Duration.ofSeconds(5))))
                .as("not registered yet").containsExactly("Later");
        clock.advance(Duration.ofSeconds(30));
        assertThat(aggregator.status("Loop").orElseThrow().timeout()).isEqualTo(Duration.ofSeconds(60));
        assertThat(aggregator.summary().live()).as("30 s: past the registered 20 s, within the override").isTrue();

        HealthReporter later = aggregator.registerReporter("Later", false, true, null);
        later.report(true, true);
        clock.advance(Duration.ofSeconds(6));
        assertThat(aggregator.status("Later").orElseThrow().readiness()).as("a later reporter gets its override")
                .isEqualTo(Verdict.TIMED_OUT);

        aggregator.overrideTimeouts(Map.of());
        assertThat(aggregator.status("Loop").orElseThrow().liveness()).as("back to 20 s").isEqualTo(Verdict.TIMED_OUT);
        assertThat(aggregator.status("Later").orElseThrow().readiness()).as("back to never").isEqualTo(Verdict.REPORTED_HEALTHY);
        assertThatThrownBy(() -> aggregator.overrideTimeouts(Map.of("Loop", Duration.ofSeconds(-1))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Loop");
    }

    @Test
    void aRepeatedIdenticalReportStillRefreshesTheTimeout() {
        HealthReporter loop = aggregator.registerReporter("Loop", true, false, Duration.ofSeconds(10));
        for (int i = 0; i < 5; i++) {
            loop.report(true, false);
            clock.advance(Duration.ofSeconds(9));
        }
        assertThat(aggregator.summary().live()).isTrue();
        assertThat(aggregator.status("Loop").orElseThrow().lastReport()).isEqualTo(clock.instant().minusSeconds(9));
    }

    @Test
    void aTimeoutOnlyFailsTheKindsTheReporterDeclared() {
        HealthReporter liveOnly = aggregator.registerReporter("LiveOnly", true, false, Duration.ofSeconds(1));
        liveOnly.report(true, true);
        clock.advance(Duration.ofSeconds(2));

        HealthSummary summary = aggregator.summary();
        assertThat(summary.live()).isFalse();
        assertThat(summary.ready()).isTrue();
    }

    @Test
    void zeroOrNullTimeoutNeverExpires() {
        aggregator.registerReporter("Zero", true, true, Duration.ZERO).report(true, true);
        aggregator.registerReporter("Null", true, true, null).report(true, true);

        clock.advance(Duration.ofDays(365));

        assertThat(aggregator.summary().live()).isTrue();
        assertThat(aggregator.summary().ready()).isTrue();
        assertThat(aggregator.status("Zero").orElseThrow().timeout()).isEqualTo(Duration.ZERO);
        assertThat(aggregator.status("Null").orElseThrow().timeout()).isEqualTo(Duration.ZERO);
    }

    @Test
    void aReportedFailureIsDistinguishedFromSilence() {
        aggregator.registerReporter("Datastore", true, true, null).report(true, false, "etcd unreachable");

        ReporterStatus status = aggregator.status("Datastore").orElseThrow();

        assertThat(status.liveness()).isEqualTo(Verdict.REPORTED_HEALTHY);
        assertThat(status.readiness()).isEqualTo(Verdict.REPORTED_UNHEALTHY);
        assertThat(status.detail()).isEqualTo("etcd unreachable");
        assertThat(status.lastReport()).isEqualTo(clock.instant());
    }

    @Test
    void summaryListsReportersByName() {
        aggregator.registerReporter("b", true, false, null);
        aggregator.registerReporter("c", true, false, null);
        aggregator.registerReporter("a", true, false, null);

        assertThat(aggregator.summary().reporters()).extracting(ReporterStatus::name).containsExactly("a", "b", "c");
    }

    @Test
    void statusOfAnUnknownReporterIsEmpty() {
        assertThat(aggregator.status("nope")).isEmpty();
    }

    @Test
    void badRegistrationsAreRejectedNamingTheProblem() {
        aggregator.registerReporter("Startup", true, true, null);

        assertThatThrownBy(() -> aggregator.registerReporter("Startup", true, false, null))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("reporter Startup: already registered");
        assertThatThrownBy(() -> aggregator.registerReporter(" ", true, true, null))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("name: must not be blank");
        assertThatThrownBy(() -> aggregator.registerReporter(null, true, true, null))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("name: must not be blank");
        assertThatThrownBy(() -> aggregator.registerReporter("Loop", true, true, Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("reporter Loop: timeout must not be negative, got PT-1S");
        assertThatThrownBy(() -> aggregator.registerReporter("Idle", false, false, null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("reporter Idle: must report liveness, readiness or both");
        // The failed duplicate did not replace the original.
        assertThat(aggregator.summary().reporters()).extracting(ReporterStatus::name).containsExactly("Startup");
    }

    @Test
    void registrationListenersSeeExistingThenNewReportersOnce() {
        aggregator.registerReporter("b", true, false, null);
        aggregator.registerReporter("a", false, true, null);
        List<String> seen = new ArrayList<>();

        aggregator.addRegistrationListener(status -> seen.add(status.name()
                + (status.reports(Probe.LIVENESS) ? "+live" : "") + (status.reports(Probe.READINESS) ? "+ready" : "")));
        aggregator.registerReporter("c", true, true, null);

        assertThat(seen).containsExactly("a+ready", "b+live", "c+live+ready");
    }

    @Test
    void concurrentReportsAndSummariesDoNotInterfere() throws InterruptedException {
        List<HealthReporter> reporters = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            reporters.add(aggregator.registerReporter("r" + i, true, true, null));
        }
        List<Thread> threads = new ArrayList<>();
        for (HealthReporter reporter : reporters) {
            // Mostly identical reports (a refresh loop), flipping now and then, to keep logs short.
            Thread thread = new Thread(() -> {
                for (int n = 0; n < 5_000; n++) {
                    boolean healthy = n % 1_000 != 999;
                    reporter.report(healthy, healthy, healthy ? "ok" : "blip");
                    aggregator.summary();
                }
                reporter.report(true, true, "done");
            });
            thread.start();
            threads.add(thread);
        }
        for (Thread thread : threads) {
            thread.join();
        }

        HealthSummary summary = aggregator.summary();
        assertThat(summary.live()).isTrue();
        assertThat(summary.ready()).isTrue();
        assertThat(summary.reporters()).allSatisfy(status -> assertThat(status.detail()).isEqualTo("done"));
    }
}
