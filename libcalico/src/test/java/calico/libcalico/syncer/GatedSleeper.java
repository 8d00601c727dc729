package calico.libcalico.syncer;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

/**
 * A {@link Sleeper} the test controls: while the gate is open a retry wait takes 1 ms; while it
 * is shut, every retry wait blocks until the test opens it. So a test can freeze the syncer
 * between "the watch broke" and "the syncer retries", change the datastore, then let it go.
 */
final class GatedSleeper implements Sleeper {

    private boolean shut;
    private int waiting;
    private int sleeps;

    @Override
    public void sleep(Duration duration) throws InterruptedException {
        synchronized (this) {
            waiting++;
            sleeps++;
            notifyAll();
            try {
                while (shut) {
                    wait();
                }
            } finally {
                waiting--;
            }
        }
        Thread.sleep(1); // the retry wait itself, shortened (the syncer's backoff, not a test's guess)
    }

    /** {@return retry waits begun so far}: each follows one failed or ended round of a cache. */
    synchronized int sleeps() {
        return sleeps;
    }

    synchronized void shut() {
        shut = true;
    }

    synchronized void open() {
        shut = false;
        notifyAll();
    }

    /** Waits until {@code n} retry waits are blocked at the gate. */
    synchronized void awaitWaiting(int n) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (waiting < n) {
            long left = deadline - System.nanoTime();
            assertThat(left).as(n + " retry waits at the gate (have " + waiting + ")").isPositive();
            wait(Math.max(1, left / 1_000_000));
        }
    }
}
