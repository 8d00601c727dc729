package calico.launcher.faults;

import java.util.List;

/**
 * The probes of one window: how many went wrong (an allowed probe that failed, a denied one that got
 * through) and when the last one that went wrong was sent.
 *
 * @param lastErrorAt epoch ms of the last probe error, or -1 when there was none
 */
record ProbeScore(int probes, int allowedErrors, int deniedErrors, long lastErrorAt) {

    int errors() {
        return allowedErrors + deniedErrors;
    }

    /** Scores the probes sent in {@code [from, to)}. */
    static ProbeScore of(List<Probe> probes, long from, long to) {
        int n = 0, allowed = 0, denied = 0;
        long last = -1;
        for (Probe p : probes) {
            if (p.at() < from || p.at() >= to) {
                continue;
            }
            n++;
            if (!p.ok()) {
                if (p.kind() == Probe.Kind.ALLOWED) {
                    allowed++;
                } else {
                    denied++;
                }
                last = Math.max(last, p.at());
            }
        }
        return new ProbeScore(n, allowed, denied, last);
    }

    /**
     * {@return when probes were normal again}: the send time of the first probe after the last error
     * (approximated as the last error + the probe interval), or {@code back} when no probe erred after it.
     */
    long normalAgainAt(long back, long intervalMillis) {
        return lastErrorAt < back ? back : lastErrorAt + intervalMillis;
    }
}
