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
 */
public record ConntrackEntry(FlowTuple original, FlowTuple reply, ConntrackCounters originalCounters,
        ConntrackCounters replyCounters, long mark, long id, long status, boolean destroyed) {

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
