package calico.felix.flows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class FlushGridTest {

    private static final long B = 1_765_000_005_000L; // a multiple of 15 s, in ms

    @Test
    void flushesFallOnTheEpochMultiplesOfTheInterval() {
        FlushGrid g = FlushGrid.of(Duration.ofSeconds(15));
        assertThat(B % 15_000).isZero();
        assertThat(g.delayToNext(B + 7_300)).isEqualTo(7_700);
        assertThat(g.delayToNext(B)).as("on a point: the next one").isEqualTo(15_000);
        assertThat(g.delayToNext(B - 1)).isEqualTo(1);
    }

    @Test
    void aFlushClosesTheIntervalItWasScheduledForEvenALittleEarlyOrLate() {
        FlushGrid g = FlushGrid.of(Duration.ofSeconds(15));
        long start = B / 1000 - 15;
        assertThat(g.end(B, start)).isEqualTo(B / 1000);
        assertThat(g.end(B - 40, start)).as("early").isEqualTo(B / 1000);
        assertThat(g.end(B + 9_000, start)).as("late, under load").isEqualTo(B / 1000);
        // The first interval after collection starts is short; it still ends on the grid.
        assertThat(g.end(B, B / 1000 - 4)).isEqualTo(B / 1000);
        // Never empty: a start on the point itself gets one second.
        assertThat(g.end(B + 100, B / 1000)).isEqualTo(B / 1000 + 1);
    }

    @Test
    void intervalsAreWholeSeconds() {
        assertThat(FlushGrid.of(Duration.ofMillis(1_500)).millis()).isEqualTo(2_000);
        assertThat(FlushGrid.of(Duration.ofMillis(200)).millis()).isEqualTo(1_000);
        assertThat(FlushGrid.of(Duration.ofSeconds(1)).delayToNext(B + 250)).isEqualTo(750);
        assertThatThrownBy(() -> new FlushGrid(1_500)).hasMessageContaining("whole seconds");
    }
}
