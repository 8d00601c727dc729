package calico.libcalico.syncer;

import java.time.Duration;
import java.util.Objects;

/**
 * Tuning of a {@link WatcherSyncer}.
 *
 * @param initialRetryDelay         first wait after a failed list or watch; it doubles on each
 *                                  further failure and resets once a watch makes progress; each
 *                                  wait is spread ±20 %
 * @param maxRetryDelay             cap on that wait
 * @param maxWatchErrorsPerRevision broken watches tolerated without progress before the kind is
 *                                  listed again instead of resuming the watch (Calico: 5, with
 *                                  waits growing to 10 s and more; ours are capped at 1 s, so the
 *                                  default is 15: about as long a broken spell, ~12 s, before a
 *                                  list replaces the resume and the revisions in between are
 *                                  skipped)
 * @param maxBatchSize              most updates per {@link SyncerCallbacks#onUpdates} call
 * @param queueCapacity             results buffered between the watchers and the dispatch thread;
 *                                  when full, watchers wait (back-pressure)
 * @param sleeper                   how retry waits are taken
 */
public record SyncerOptions(Duration initialRetryDelay, Duration maxRetryDelay, int maxWatchErrorsPerRevision,
                            int maxBatchSize, int queueCapacity, Sleeper sleeper) {

    public SyncerOptions {
        Objects.requireNonNull(initialRetryDelay, "initialRetryDelay");
        Objects.requireNonNull(maxRetryDelay, "maxRetryDelay");
        Objects.requireNonNull(sleeper, "sleeper");
        if (initialRetryDelay.isNegative()) {
            throw new IllegalArgumentException("initialRetryDelay must not be negative, got " + initialRetryDelay);
        }
        if (maxRetryDelay.compareTo(initialRetryDelay) < 0) {
            throw new IllegalArgumentException("maxRetryDelay (" + maxRetryDelay
                    + ") must not be less than initialRetryDelay (" + initialRetryDelay + ")");
        }
        if (maxWatchErrorsPerRevision < 0) {
            throw new IllegalArgumentException("maxWatchErrorsPerRevision must not be negative, got "
                    + maxWatchErrorsPerRevision);
        }
        if (maxBatchSize < 1) {
            throw new IllegalArgumentException("maxBatchSize must be at least 1, got " + maxBatchSize);
        }
        if (queueCapacity < 1) {
            throw new IllegalArgumentException("queueCapacity must be at least 1, got " + queueCapacity);
        }
    }

    /**
     * {@return the defaults: retries from 250 ms up to 1 s (each ±20 %), batches of 1000}. The
     * cap is low so that a watcher is back within ~1.2 s of its datastore returning after any
     * outage (issue 29; it was 10 s); the jitter keeps many nodes from retrying in step.
     */
    public static SyncerOptions defaults() {
        return new SyncerOptions(Duration.ofMillis(250), Duration.ofSeconds(1), 15, 1000, 2000, Sleeper.system());
    }

    public SyncerOptions withRetryDelays(Duration initial, Duration max) {
        return new SyncerOptions(initial, max, maxWatchErrorsPerRevision, maxBatchSize, queueCapacity, sleeper);
    }

    public SyncerOptions withMaxWatchErrorsPerRevision(int max) {
        return new SyncerOptions(initialRetryDelay, maxRetryDelay, max, maxBatchSize, queueCapacity, sleeper);
    }

    public SyncerOptions withMaxBatchSize(int max) {
        return new SyncerOptions(initialRetryDelay, maxRetryDelay, maxWatchErrorsPerRevision, max, queueCapacity, sleeper);
    }

    public SyncerOptions withQueueCapacity(int capacity) {
        return new SyncerOptions(initialRetryDelay, maxRetryDelay, maxWatchErrorsPerRevision, maxBatchSize, capacity,
                sleeper);
    }

    public SyncerOptions withSleeper(Sleeper newSleeper) {
        return new SyncerOptions(initialRetryDelay, maxRetryDelay, maxWatchErrorsPerRevision, maxBatchSize,
                queueCapacity, newSleeper);
    }
}
