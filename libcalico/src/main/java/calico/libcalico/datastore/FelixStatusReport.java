package calico.libcalico.datastore;

/**
 * Calico felix's periodic status report ({@code reportingInterval}): when it was made (RFC 3339), how long felix has
 * run, and whether it is the first this felix process wrote. On etcd it is Calico's JSON
 * {@code {"time": …, "uptime": …, "first_update": …}} under {@code /calico/felix/v2/no-region/host/<node>/status}
 * (expiring after {@code reportingTTL}) and {@code …/last_reported_status} (kept).
 */
public record FelixStatusReport(String time, double uptimeSeconds, boolean firstUpdate) {

    /** {@return Calico's JSON form} */
    public String toJson() {
        return "{\"time\":\"" + time + "\",\"uptime\":" + uptimeSeconds + ",\"first_update\":" + firstUpdate + "}";
    }
}
