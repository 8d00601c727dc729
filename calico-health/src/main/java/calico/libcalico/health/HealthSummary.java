package calico.libcalico.health;

import java.util.List;

/**
 * Overall health at one instant: live when every liveness reporter is live, ready when every
 * readiness reporter is ready. With no reporters at all, both hold (there is nothing to fail).
 *
 * @param live      overall liveness
 * @param ready     overall readiness
 * @param reporters every reporter's status, sorted by name
 */
public record HealthSummary(boolean live, boolean ready, List<ReporterStatus> reporters) {

    public HealthSummary {
        reporters = List.copyOf(reporters);
    }

    /** {@return overall health for one probe} */
    public boolean healthy(Probe probe) {
        return probe == Probe.LIVENESS ? live : ready;
    }
}
