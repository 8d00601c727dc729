package calico.dataplane.netlink;

/**
 * A policy routing rule ({@code ip rule}) that sends packets to a table: {@code [not] fwmark
 * mark/mask lookup table priority p}. Only the fields Calico's rules use; a rule read back with
 * other selectors (source, interface...) is not one of ours and is not listed.
 *
 * @param ipv6   the IPv6 rule list (else IPv4)
 * @param invert {@code not}: the rule matches packets whose mark does not match
 * @param mask   0 with mark 0: no fwmark match
 */
public record RoutingRule(boolean ipv6, int priority, long table, long mark, long mask, boolean invert) {

    public RoutingRule {
        if (priority < 0) {
            throw new IllegalArgumentException("priority: " + priority + " is negative");
        }
        if (table <= 0 || table > 0xffffffffL) {
            throw new IllegalArgumentException("table: " + table + " is outside 1..4294967295");
        }
    }

    @Override
    public String toString() {
        return (ipv6 ? "ipv6 " : "") + priority + ": " + (invert ? "not " : "")
                + (mask != 0 || mark != 0 ? "fwmark 0x" + Long.toHexString(mark) + "/0x" + Long.toHexString(mask) + " " : "")
                + "lookup " + table;
    }
}
