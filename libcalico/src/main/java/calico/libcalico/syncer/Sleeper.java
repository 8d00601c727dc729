package calico.libcalico.syncer;

import java.time.Duration;

/** Waits between retries; injected so that tests control time. */
@FunctionalInterface
public interface Sleeper {

    void sleep(Duration duration) throws InterruptedException;

    /** {@return a sleeper that blocks the calling thread for the duration}. */
    static Sleeper system() {
        return d -> Thread.sleep(d.toMillis(), d.toNanosPart() % 1_000_000);
    }
}
