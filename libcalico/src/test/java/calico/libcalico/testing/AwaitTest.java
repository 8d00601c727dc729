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
}
