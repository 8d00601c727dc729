package calico.libcalico.health;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

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

    /**
     * {@return every reporter that declared {@code probe}}, by name: its verdict, detail, timeout and
     * last report time, as the probes' JSON lists them (Actuator's indicators and {@link HttpAnswers#probe})
     */
    public Map<String, Object> reporterDetails(Probe probe) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (ReporterStatus status : reporters) {
            if (status.reports(probe)) {
                Verdict verdict = status.verdict(probe);
                Map<String, Object> json = new LinkedHashMap<>();
                json.put(probe.adjective(), verdict.healthy());
                json.put("state", verdict.text());
                json.put("detail", status.detail());
                json.put("timeout", status.timeout().isZero() ? "none" : status.timeout().toString());
                json.put("lastReport", status.lastReport() == null ? "never" : status.lastReport().toString());
                out.put(status.name(), json);
            }
        }
        return out;
    }
}
