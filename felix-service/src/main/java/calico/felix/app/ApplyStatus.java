package calico.felix.app;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * The outcome of the last batch handed to the dataplane.
 *
 * @param at        when it finished ({@code null}: nothing applied yet)
 * @param batchSize updates in it
 * @param took      how long the dataplane took
 * @param batches   batches applied since start
 * @param inSync    whether the dataplane has received InSync
 * @param errors    the dataplane's recorded problems (protocol violations, driver failures)
 */
public record ApplyStatus(Instant at, int batchSize, Duration took, long batches, boolean inSync,
                          List<String> errors) {
    public ApplyStatus {
        errors = List.copyOf(errors);
    }

    static ApplyStatus none() {
        return new ApplyStatus(null, 0, Duration.ZERO, 0, false, List.of());
    }
}
