package calico.libcalico.testing;

import java.time.Duration;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Waiting for a condition in tests, shared by every module: polls it (every 5 ms at first,
 * backing off to 100 ms) until it holds, and fails with what was awaited once the deadline
 * passes. The only place tests poll; a test never sleeps for a fixed time.
 *
 * <pre>{@code
 * Await.until("felix ready", Duration.ofSeconds(30), felix::ready);
 * String rv = Await.value("the watch's bookmark", Duration.ofSeconds(10), () -> Optional.ofNullable(seen.get()));
 * HttpResponse<String> r = Await.until("readiness 200", Duration.ofSeconds(30), () -> get("/readiness"),
 *         x -> x.statusCode() == 200); // on timeout the message shows the last response
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

    /** A look at what is awaited; it may do I/O. */
    @FunctionalInterface
    public interface Probe<T> {
        T look() throws Exception;
    }

    /**
     * {@return the first thing {@code probe} sees that meets {@code done}}; after {@code timeout}
     * throws {@link AssertionError} naming {@code what} and the last thing seen. An exception from
     * the probe ends the wait at once, as an {@link AssertionError} naming {@code what}.
     */
    public static <T> T until(String what, Duration timeout, Probe<T> probe, Predicate<? super T> done) {
        Object[] last = {"nothing (not looked)"};
        try {
            return value(what, timeout, () -> {
                T seen;
                try {
                    seen = probe.look();
                } catch (Exception e) {
                    throw new ProbeFailed(e);
                }
                last[0] = seen;
                return done.test(seen) ? Optional.of(seen) : Optional.empty();
            });
        } catch (ProbeFailed e) {
            throw new AssertionError(what + ": the probe failed: " + e.getCause(), e.getCause());
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; last seen: " + last[0], e);
        }
    }

    /**
     * {@return whether {@code condition} held within {@code timeout}}, for a wait whose end is not
     * a failure (the caller decides what a timeout means); false, with the interrupt flag set, when interrupted.
     */
    public static boolean within(Duration timeout, BooleanSupplier condition) {
        try {
            return poll(timeout, () -> condition.getAsBoolean() ? Optional.of(Boolean.TRUE) : Optional.empty())
                    .isPresent();
        } catch (Interrupted e) {
            return false;
        }
    }

    /** {@return the first value {@code probe} gives}; throws {@link AssertionError} naming {@code what} after {@code timeout}. */
    public static <T> T value(String what, Duration timeout, Supplier<Optional<T>> probe) {
        try {
            return poll(timeout, probe).orElseThrow(() -> new AssertionError(what + ": not within " + timeout));
        } catch (Interrupted e) {
            throw new AssertionError(what + ": interrupted while waiting", e.getCause());
        }
    }

    /** The first value {@code probe} gives, or empty once {@code timeout} has passed. */
    private static <T> Optional<T> poll(Duration timeout, Supplier<Optional<T>> probe) {
        long deadline = System.nanoTime() + timeout.toNanos();
        long poll = FIRST_POLL_NANOS;
        while (true) {
            Optional<T> v = probe.get();
            if (v.isPresent()) {
                return v;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return Optional.empty();
            }
            try {
                Thread.sleep(Duration.ofNanos(Math.min(poll, left)).toMillis() + 1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new Interrupted(e);
            }
            poll = Math.min(poll * 2, MAX_POLL_NANOS);
        }
    }

    /** Carries a probe's exception out of the polling lambda. */
    private static final class ProbeFailed extends RuntimeException {
        ProbeFailed(Exception cause) {
            super(cause);
        }
    }

    /** Carries an interrupt out of {@link #poll}. */
    private static final class Interrupted extends RuntimeException {
        Interrupted(InterruptedException cause) {
            super(cause);
        }
    }
}
