package calico.dataplane.netfilter;

/**
 * One conntrack entry.
 *
 * @param original the tuple of the direction that opened the connection
 * @param reply the tuple the kernel expects for replies (differs from {@code original.reversed()} under NAT)
 * @param originalCounters counters of the original direction (0 without accounting)
 * @param replyCounters counters of the reply direction (0 without accounting)
 * @param mark the connection mark ({@code ct mark})
 * @param id the kernel's id of the entry (unique among live entries; reused after they end)
 * @param status the {@code IPS_*} status bits (e.g. 0x2 SEEN_REPLY, 0x4 ASSURED, 0x8 CONFIRMED)
 * @param destroyed whether this came from a DESTROY event: the connection has ended and the
 *        counters are final
 * @param tcpState the kernel's TCP conntrack state ({@code CTA_PROTOINFO_TCP_STATE}: 3 ESTABLISHED,
 *        7 TIME_WAIT, 8 CLOSE, ...); {@link #NO_TCP_STATE} when the entry carries none (not TCP)
 */
public record ConntrackEntry(FlowTuple original, FlowTuple reply, ConntrackCounters originalCounters,
        ConntrackCounters replyCounters, long mark, long id, long status, boolean destroyed, int tcpState) {

    /** {@link #tcpState()} of an entry without TCP protocol information. */
    public static final int NO_TCP_STATE = -1;
    /** {@code TCP_CONNTRACK_ESTABLISHED}. */
    public static final int TCP_ESTABLISHED = 3;
    /** {@code TCP_CONNTRACK_TIME_WAIT}: the first of the states in which the connection is over. */
    public static final int TCP_TIME_WAIT = 7;
    /** {@code TCP_CONNTRACK_CLOSE}. */
    public static final int TCP_CLOSE = 8;

    /** An entry without TCP state (UDP, ICMP, or a message that carried none). */
    public ConntrackEntry(FlowTuple original, FlowTuple reply, ConntrackCounters originalCounters,
                          ConntrackCounters replyCounters, long mark, long id, long status, boolean destroyed) {
        this(original, reply, originalCounters, replyCounters, mark, id, status, destroyed, NO_TCP_STATE);
    }

    /**
     * {@return whether this is a TCP connection in TIME_WAIT or a later state} (TIME_WAIT, CLOSE,
     * and the numerically higher ones): over, though conntrack keeps the entry for a while. Calico's
     * collector treats such entries as expired (state {@code >= TCP_CONNTRACK_TIME_WAIT}).
     */
    public boolean tcpClosed() {
        return original.protocol() == 6 && tcpState >= TCP_TIME_WAIT;
    }

    /** {@return whether the kernel rewrote the destination (DNAT, e.g. a kube-proxy service VIP)} */
    public boolean dnat() {
        return hasStatus(STATUS_DST_NAT) || !original.dst().equals(reply.src())
                || original.dstPort() != reply.srcPort();
    }

    /**
     * {@return the original tuple with the destination the packets really went to} (the reply's
     * source): the tuple the filter table, and so NFLOG, sees after DNAT; the original tuple itself
     * without DNAT.
     */
    public FlowTuple originalWithoutDnat() {
        if (!dnat()) {
            return original;
        }
        return new FlowTuple(original.src(), reply.src(), original.protocol(), original.srcPort(), reply.srcPort());
    }

    /** {@code IPS_SEEN_REPLY}: packets were seen in both directions. */
    public static final long STATUS_SEEN_REPLY = 0x2;
    /** {@code IPS_ASSURED}: the connection is established (will not be dropped early). */
    public static final long STATUS_ASSURED = 0x4;
    /** {@code IPS_CONFIRMED}: the entry is in the table (its first packet left the host). */
    public static final long STATUS_CONFIRMED = 0x8;
    /** {@code IPS_SRC_NAT}. */
    public static final long STATUS_SRC_NAT = 0x10;
    /** {@code IPS_DST_NAT}. */
    public static final long STATUS_DST_NAT = 0x20;

    /** {@return whether all of {@code bits} are set in {@link #status()}}. */
    public boolean hasStatus(long bits) {
        return (status & bits) == bits;
    }
}
