package calico.controllers.reconcile;

import java.time.Instant;

/**
 * What one {@link ReconcileLoop} is doing, for health.
 *
 * @param name         the loop's name ({@code node}, {@code config}, ...)
 * @param runningSince when the run under way started; null when idle
 * @param progressAt   when the run under way last said it moved on (its start, until it says so); null when idle
 * @param lastSuccess  when the last successful run ended; null before the first
 * @param lastFailure  when the last failed run ended; null if none failed
 * @param lastError    why the last failed run failed; empty if none failed
 */
public record LoopStatus(String name, Instant runningSince, Instant progressAt, Instant lastSuccess, Instant lastFailure,
                         String lastError) {

    /** {@return whether the last run that ended failed} */
    public boolean failing() {
        return lastFailure != null && (lastSuccess == null || lastFailure.isAfter(lastSuccess));
    }
}
