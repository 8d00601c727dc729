package calico.libcalico.health;

/** The two kinds of health a reporter can report, as Kubernetes probes them. */
public enum Probe {
    /** Whether the process works at all; failing it gets the process restarted. */
    LIVENESS("live"),
    /** Whether the process is ready to do its job; failing it takes it out of service. */
    READINESS("ready");

    private final String adjective;

    Probe(String adjective) {
        this.adjective = adjective;
    }

    /** {@return "live" or "ready", the word used in logs and JSON} */
    public String adjective() {
        return adjective;
    }
}
