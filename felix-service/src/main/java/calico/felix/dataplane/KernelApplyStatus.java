package calico.felix.dataplane;

import calico.felix.dataplane.rules.PolicyDriver;
import java.time.Duration;
import java.time.Instant;

/**
 * The outcome of the kernel dataplane's last batch.
 *
 * @param at        when it finished
 * @param took      policy driver plus routes
 * @param batchSize updates in the batch
 * @param backend   the policy driver that applied it ({@code none} when there was none)
 * @param stats     what the policy driver wrote; {@code null} when it failed or there was none
 * @param error     the failure, {@code null} when it succeeded
 */
public record KernelApplyStatus(Instant at, Duration took, int batchSize, String backend,
                                PolicyDriver.ApplyStats stats, String error) {
}
