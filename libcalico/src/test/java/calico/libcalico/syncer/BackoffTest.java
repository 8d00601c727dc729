package calico.libcalico.syncer;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class BackoffTest {

    @Test
    void waitsDoubleUpToTheCapEachSpreadByTwentyPercentAndResetOnProgress() {
        double[] draw = {0.0};
        Backoff low = new Backoff(Duration.ofMillis(250), Duration.ofSeconds(1), () -> draw[0]);
        List<Long> lows = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            lows.add(low.next().toMillis());
        }
        assertThat(lows).containsExactly(200L, 400L, 800L, 800L, 800L);

        draw[0] = 0.999_999;
        Backoff high = new Backoff(Duration.ofMillis(250), Duration.ofSeconds(1), () -> draw[0]);
        List<Long> highs = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            highs.add(high.next().toMillis());
        }
        assertThat(highs).containsExactly(299L, 599L, 1199L, 1199L, 1199L);
        high.reset();
        assertThat(high.next().toMillis()).as("reset").isEqualTo(299L);
    }

    @Test
    void theDefaultsBringAWatcherBackWithinOnePointTwoSecondsAfterAnyOutage() {
        SyncerOptions d = SyncerOptions.defaults();
        Backoff b = new Backoff(d.initialRetryDelay(), d.maxRetryDelay());
        long longest = 0;
        long shortest = Long.MAX_VALUE;
        for (int i = 0; i < 1000; i++) {
            long w = b.next().toMillis();
            longest = Math.max(longest, w);
            if (i > 10) {
                shortest = Math.min(shortest, w);
            }
        }
        assertThat(longest).isLessThanOrEqualTo(1200);
        assertThat(shortest).as("the jitter spreads the capped waits").isGreaterThanOrEqualTo(800).isLessThan(1000);
    }
}
