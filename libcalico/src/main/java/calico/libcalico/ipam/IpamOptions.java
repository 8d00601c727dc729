package calico.libcalico.ipam;

import java.time.Clock;

/**
 * Tuning of an {@link IpamClient}.
 *
 * @param maxRetries how many times one compare-and-swap step is retried after a conflict before
 *                   the call fails with {@link IpamException.TooMuchContention} (Calico uses 100)
 * @param clock      time source for the block's {@code affinityClaimTime}
 */
public record IpamOptions(int maxRetries, Clock clock) {

    public IpamOptions {
        if (maxRetries < 1) {
            throw new IllegalArgumentException("maxRetries: must be at least 1, got " + maxRetries);
        }
        if (clock == null) {
            throw new IllegalArgumentException("clock: is required");
        }
    }

    /** {@return 100 retries and the system clock, as Calico} */
    public static IpamOptions defaults() {
        return new IpamOptions(100, Clock.systemUTC());
    }
}
