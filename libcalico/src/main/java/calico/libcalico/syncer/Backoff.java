package calico.libcalico.syncer;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;

/**
 * Exponential retry delay: initial, doubled per failure up to a cap, reset on progress; each
 * wait is spread by ±{@link #JITTER} so that the many watchers of many nodes do not retry a
 * recovering datastore in step. Not thread-safe.
 */
public final class Backoff {

    /** Each wait is the nominal one times a factor in [1 − JITTER, 1 + JITTER). */
    static final double JITTER = 0.2;

    private final Duration initial;
    private final Duration max;
    /** Uniform in [0, 1). */
    private final DoubleSupplier random;
    private Duration next;

    public Backoff(Duration initial, Duration max) {
        this(initial, max, () -> ThreadLocalRandom.current().nextDouble());
    }

    Backoff(Duration initial, Duration max, DoubleSupplier random) {
        this.initial = initial;
        this.max = max;
        this.random = random;
        this.next = initial;
    }

    /** {@return the wait before the next try}, and doubles the one after (up to the cap). */
    public Duration next() {
        Duration current = next;
        Duration doubled = next.multipliedBy(2);
        next = doubled.compareTo(max) > 0 ? max : doubled;
        double factor = 1 - JITTER + 2 * JITTER * random.getAsDouble();
        return Duration.ofNanos((long) (current.toNanos() * factor));
    }

    /** Back to the initial wait (progress was made). */
    public void reset() {
        next = initial;
    }
}
