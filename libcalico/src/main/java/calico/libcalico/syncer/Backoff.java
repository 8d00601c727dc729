package calico.libcalico.syncer;

import java.time.Duration;

/** Exponential retry delay: initial, doubled per failure up to a cap, reset on progress. Not thread-safe. */
final class Backoff {

    private final Duration initial;
    private final Duration max;
    private Duration next;

    Backoff(Duration initial, Duration max) {
        this.initial = initial;
        this.max = max;
        this.next = initial;
    }

    Duration next() {
        Duration current = next;
        Duration doubled = next.multipliedBy(2);
        next = doubled.compareTo(max) > 0 ? max : doubled;
        return current;
    }

    void reset() {
        next = initial;
    }
}
