package calico.libcalico.health;

/**
 * One reporter's verdict on one {@link Probe}. Only {@link #NOT_APPLICABLE} and
 * {@link #REPORTED_HEALTHY} count as healthy: a reporter that stays silent (never reported,
 * or let its timeout expire) fails the probes it declared.
 */
public enum Verdict {
    /** The reporter did not declare this kind of health; it never affects the probe. */
    NOT_APPLICABLE(true, "-"),
    /** The latest report, still fresh, says healthy. */
    REPORTED_HEALTHY(true, "reporting healthy"),
    /** The latest report, still fresh, says unhealthy. */
    REPORTED_UNHEALTHY(false, "reporting unhealthy"),
    /** The reporter has a refresh timeout and its latest report is older than that. */
    TIMED_OUT(false, "timed out"),
    /** The reporter has been registered but has not reported yet. */
    NEVER_REPORTED(false, "never reported");

    private final boolean healthy;
    private final String text;

    Verdict(boolean healthy, String text) {
        this.healthy = healthy;
        this.text = text;
    }

    /** {@return whether this verdict lets the probe pass} */
    public boolean healthy() {
        return healthy;
    }

    /** {@return a short human-readable description, used in JSON and logs} */
    public String text() {
        return text;
    }
}
