package calico.dataplane.netfilter;

/**
 * Packets and bytes seen in one direction of a connection. Both are 0 unless conntrack
 * accounting ({@code net.netfilter.nf_conntrack_acct=1}) was on when the connection began; see
 * {@link ConntrackSettings#enableAccounting()}.
 */
public record ConntrackCounters(long packets, long bytes) {
    public static final ConntrackCounters ZERO = new ConntrackCounters(0, 0);
}
