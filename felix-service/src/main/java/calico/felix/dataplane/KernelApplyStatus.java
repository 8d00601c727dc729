package calico.felix.dataplane;

import calico.felix.dataplane.rules.PolicyDriver;
import java.time.Duration;
import java.time.Instant;

/**
 * The outcome of the kernel dataplane's last apply: the graph batches that queued while the
 * previous apply ran, applied together.
 *
 * @param at        when it finished (everything in it is in the kernel)
 * @param took      policy driver plus routes
 * @param batchSize updates in the apply (all its batches)
 * @param batches   graph batches merged into it (1 when nothing queued behind the previous apply)
 * @param backend   the policy driver that applied it ({@code none} when there was none)
 * @param stats     what the policy driver wrote; {@code null} when it failed or there was none
 * @param error     the failure, {@code null} when it succeeded
 */
public record KernelApplyStatus(Instant at, Duration took, int batchSize, int batches, String backend,
                                PolicyDriver.ApplyStats stats, String error) {
}
