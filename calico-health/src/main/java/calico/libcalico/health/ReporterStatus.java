package calico.libcalico.health;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * The state of one reporter at one instant, as computed by {@link HealthAggregator#summary()}.
 *
 * @param name       the reporter's name
 * @param timeout    how fresh reports must be; {@link Duration#ZERO} means they never expire
 * @param liveness   the verdict on liveness
 * @param readiness  the verdict on readiness
 * @param detail     the detail text of the latest report ("" when none)
 * @param lastReport when the latest report was made, or {@code null} if never
 */
public record ReporterStatus(
        String name, Duration timeout, Verdict liveness, Verdict readiness, String detail, Instant lastReport) {

    public ReporterStatus {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(liveness, "liveness");
        Objects.requireNonNull(readiness, "readiness");
        Objects.requireNonNull(detail, "detail");
    }

    /** {@return the verdict on one probe} */
    public Verdict verdict(Probe probe) {
        return probe == Probe.LIVENESS ? liveness : readiness;
    }

    /** {@return whether this reporter declared that it reports the given kind of health} */
    public boolean reports(Probe probe) {
        return verdict(probe) != Verdict.NOT_APPLICABLE;
    }
}
