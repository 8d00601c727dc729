package calico.libcalico.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class AwaitTest {

    @Test
    void returnsTheFirstValueOnceTheConditionHolds() {
        AtomicInteger polls = new AtomicInteger();
        String v = Await.value("the third poll", Duration.ofSeconds(5),
                () -> polls.incrementAndGet() == 3 ? Optional.of("third") : Optional.empty());
        assertThat(v).isEqualTo("third");
        assertThat(polls).hasValue(3);
        Await.until("at once", Duration.ZERO, () -> true);
    }

    @Test
    void failsNamingWhatItAwaitedAfterTheDeadline() {
        assertThatThrownBy(() -> Await.until("the sky to fall", Duration.ofMillis(50), () -> false))
                .isInstanceOf(AssertionError.class).hasMessage("the sky to fall: not within PT0.05S");
    }

    @Test
    void aProbedWaitReturnsWhatItSawAndFailsNamingTheLastThingSeen() {
        AtomicInteger n = new AtomicInteger();
        assertThat(Await.until("a count of 3", Duration.ofSeconds(5), n::incrementAndGet, v -> v >= 3)).isEqualTo(3);
        assertThatThrownBy(() -> Await.until("a count of 0", Duration.ofMillis(50), () -> "count " + n.get(),
                v -> v.equals("count 0")))
                .isInstanceOf(AssertionError.class).hasMessage("a count of 0: not within PT0.05S; last seen: count 3");
    }

    @Test
    void aProbeThatThrowsEndsTheWaitAtOnceNamingWhatWasAwaited() {
        AtomicInteger looks = new AtomicInteger();
        assertThatThrownBy(() -> Await.until("port open", Duration.ofSeconds(30), () -> {
            looks.incrementAndGet();
            throw new java.io.IOException("connection refused");
        }, v -> true)).isInstanceOf(AssertionError.class)
                .hasMessage("port open: the probe failed: java.io.IOException: connection refused")
                .hasCauseInstanceOf(java.io.IOException.class);
        assertThat(looks).hasValue(1);
    }

    @Test
    void withinSaysWhetherTheConditionHeldWithoutFailing() {
        AtomicInteger polls = new AtomicInteger();
        assertThat(Await.within(Duration.ofSeconds(5), () -> polls.incrementAndGet() == 2)).isTrue();
        long t0 = System.nanoTime();
        assertThat(Await.within(Duration.ofMillis(50), () -> false)).isFalse();
        assertThat(System.nanoTime() - t0).as("it waited the whole timeout").isGreaterThanOrEqualTo(50_000_000L);
    }
}
