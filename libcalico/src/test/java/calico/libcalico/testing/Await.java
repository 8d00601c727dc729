package calico.libcalico.testing;

import java.time.Duration;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Waiting for a condition in tests, shared by every module: polls it (every 5 ms at first,
 * backing off to 100 ms) until it holds, and fails with what was awaited once the deadline
 * passes. The only place tests poll; a test never sleeps for a fixed time.
 *
 * <pre>{@code
 * Await.until("felix ready", Duration.ofSeconds(30), felix::ready);
 * String rv = Await.value("the watch's bookmark", Duration.ofSeconds(10), () -> Optional.ofNullable(seen.get()));
 * }</pre>
 */
public final class Await {

    private static final long FIRST_POLL_NANOS = Duration.ofMillis(5).toNanos();
    private static final long MAX_POLL_NANOS = Duration.ofMillis(100).toNanos();

    private Await() {
    }

    /** Returns once {@code condition} holds; throws {@link AssertionError} naming {@code what} after {@code timeout}. */
    public static void until(String what, Duration timeout, BooleanSupplier condition) {
        value(what, timeout, () -> condition.getAsBoolean() ? Optional.of(Boolean.TRUE) : Optional.empty());
    }

    /** {@return the first value {@code probe} gives}; throws {@link AssertionError} naming {@code what} after {@code timeout}. */
    public static <T> T value(String what, Duration timeout, Supplier<Optional<T>> probe) {
        long deadline = System.nanoTime() + timeout.toNanos();
        long poll = FIRST_POLL_NANOS;
        while (true) {
            Optional<T> v = probe.get();
            if (v.isPresent()) {
                return v.get();
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new AssertionError(what + ": not within " + timeout);
            }
            try {
                Thread.sleep(Duration.ofNanos(Math.min(poll, left)).toMillis() + 1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(what + ": interrupted while waiting", e);
            }
            poll = Math.min(poll * 2, MAX_POLL_NANOS);
        }
    }
}
