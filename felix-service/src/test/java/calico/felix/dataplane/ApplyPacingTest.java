package calico.felix.dataplane;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** When the next apply takes the queue and when the driver may hold back, on given clock values. */
class ApplyPacingTest {

    private static final long MS = 1_000_000;

    @Test
    void aChangeAfterAQuietApplyGoesAtOnce() {
        ApplyPacing p = new ApplyPacing();
        assertThat(p.catchingUp()).isFalse();
        p.finished(0, 300 * MS, false, false);
        assertThat(p.catchingUp()).isFalse();
        assertThat(p.gatherWait(301 * MS, new ApplyQueue.Arrival(300 * MS, false))).isZero();
        assertThat(p.mayHold(p.catchingUp(), 10_000, 301 * MS)).isFalse();
    }

    @Test
    void whileCatchingUpTheNextApplyGathersTwiceTheLastOneBoundedAndStopsWhenTheWritesStop() {
        ApplyPacing p = new ApplyPacing();
        p.finished(0, 100 * MS, false, true); // 100 ms apply: gather the minimum, 500 ms
        assertThat(p.catchingUp()).isTrue();
        assertThat(p.gatherWait(100 * MS, new ApplyQueue.Arrival(100 * MS, false)))
                .as("writes still coming: until the quiet time after the last one").isEqualTo(150 * MS);
        assertThat(p.gatherWait(100 * MS, new ApplyQueue.Arrival(500 * MS, false))).isEqualTo(500 * MS);
        assertThat(p.gatherWait(100 * MS, new ApplyQueue.Arrival(500 * MS, true))).as("over the bound").isZero();

        p.finished(1_000 * MS, 1_400 * MS, false, true); // 400 ms apply: gather 800 ms
        assertThat(p.gatherWait(1_400 * MS, new ApplyQueue.Arrival(10_000 * MS, false))).isEqualTo(800 * MS);
        p.finished(2_000 * MS, 7_000 * MS, false, true); // 5 s apply: gather the maximum, 2 s
        assertThat(p.gatherWait(7_000 * MS, new ApplyQueue.Arrival(20_000 * MS, false))).isEqualTo(2_000 * MS);
    }

    @Test
    void onlyALargeCatchUpApplyMayHoldAndForAtMostMaxHold() {
        ApplyPacing p = new ApplyPacing();
        assertThat(p.mayHold(true, ApplyPacing.MORE_COMING_MIN_UPDATES - 1, 0)).isFalse();
        assertThat(p.mayHold(true, ApplyPacing.MORE_COMING_MIN_UPDATES, 0)).isTrue();
        assertThat(p.mayHold(false, 10_000, 0)).isFalse();
        p.finished(1_000 * MS, 1_100 * MS, true, false); // held since 1 s: the next apply gathers even with nothing queued
        assertThat(p.catchingUp()).isTrue();
        p.finished(2_000 * MS, 2_100 * MS, true, false);
        assertThat(p.mayHold(true, 10_000, 4_900 * MS)).isTrue();
        assertThat(p.mayHold(true, 10_000, 5_000 * MS)).as("4 s after the first held apply").isFalse();
        p.finished(5_000 * MS, 5_100 * MS, false, false);
        assertThat(p.mayHold(true, 10_000, 9_000 * MS)).as("nothing held: the clock restarts").isTrue();
    }
}
