package calico.apiserver.auth;

import static org.assertj.core.api.Assertions.assertThat;

import calico.libcalico.testing.MutableClock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class TtlCacheTest {

    @Test
    void anEntryLivesForItsTtlOnly() {
        MutableClock clock = new MutableClock(1_000);
        TtlCache<String, Boolean> cache = new TtlCache<>(clock);
        cache.put("allowed", true, Duration.ofSeconds(10));
        cache.put("denied", false, Duration.ofSeconds(3));
        clock.advance(Duration.ofSeconds(2));
        assertThat(cache.get("allowed")).contains(true);
        assertThat(cache.get("denied")).contains(false);
        clock.advance(Duration.ofSeconds(1));
        assertThat(cache.get("denied")).as("expired at 3 s").isEmpty();
        clock.advance(Duration.ofSeconds(7));
        assertThat(cache.get("allowed")).as("expired at 10 s").isEmpty();
        assertThat(cache.size()).isZero();
    }

    @Test
    void aZeroTtlKeepsNothingAndAFullCacheMakesRoom() {
        MutableClock clock = new MutableClock(1_000);
        TtlCache<Integer, Integer> cache = new TtlCache<>(clock);
        cache.put(0, 0, Duration.ZERO);
        assertThat(cache.get(0)).isEmpty();
        for (int i = 0; i < TtlCache.MAX_ENTRIES; i++) {
            cache.put(i, i, Duration.ofSeconds(i < 10 ? 1 : 60));
        }
        clock.advance(Duration.ofSeconds(2));
        cache.put(-1, -1, Duration.ofSeconds(60));
        assertThat(cache.size()).as("the ten expired entries went").isEqualTo(TtlCache.MAX_ENTRIES - 9);
        assertThat(cache.get(-1)).contains(-1);
    }
}
