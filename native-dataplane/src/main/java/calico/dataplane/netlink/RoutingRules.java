package calico.dataplane.netlink;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Policy routing rules ({@code RTM_*RULE}) over its own rtnetlink socket, a class apart so
 * {@link Netlink}'s API stays as it is. Like {@link Netlink}, an instance acts on the network
 * namespace of the thread that made it and is not thread-safe.
 */
public final class RoutingRules implements AutoCloseable {
    private static final int RTM_NEWRULE = 32;
    private static final int RTM_DELRULE = 33;
    private static final int RTM_GETRULE = 34;
    private static final int FRA_DST = 1;
    private static final int FRA_SRC = 2;
    private static final int FRA_IIFNAME = 3;
    private static final int FRA_PRIORITY = 6;
    private static final int FRA_FWMARK = 10;
    private static final int FRA_TABLE = 15;
    private static final int FRA_FWMASK = 16;
    private static final int FRA_OIFNAME = 17;
    private static final int FIB_RULE_INVERT = 0x2;
    private static final int FR_ACT_TO_TBL = 1;

    private final NetlinkSocket socket = new NetlinkSocket();

    /** {@return the IPv4 and IPv6 rules that go to a table and select at most a fwmark} */
    public List<RoutingRule> list() {
        List<RoutingRule> out = new ArrayList<>();
        for (NetlinkSocket.Message m : socket.dump("list rules", header(RTM_GETRULE,
                NetlinkSocket.NLM_F_REQUEST | NetlinkSocket.NLM_F_DUMP, Netlink.AF_UNSPEC, 0, 0))) {
            if (m.type() != RTM_NEWRULE) {
                continue;
            }
            ByteBuffer p = m.payload();
            int family = Byte.toUnsignedInt(p.get(0));
            int headerTable = Byte.toUnsignedInt(p.get(4));
            int action = Byte.toUnsignedInt(p.get(7));
            int flags = p.getInt(8);
            Attributes a = Attributes.parse(p.position(12));
            if (action != FR_ACT_TO_TBL || (family != Netlink.AF_INET && family != Netlink.AF_INET6)
                    || a.has(FRA_SRC) || a.has(FRA_DST) || a.has(FRA_IIFNAME) || a.has(FRA_OIFNAME)
                    || Byte.toUnsignedInt(p.get(1)) != 0 || Byte.toUnsignedInt(p.get(2)) != 0) {
                continue;
            }
            long table = a.u32(FRA_TABLE).map(Integer::toUnsignedLong).orElse((long) headerTable);
            out.add(new RoutingRule(family == Netlink.AF_INET6, a.u32(FRA_PRIORITY).orElse(0), table,
                    a.u32(FRA_FWMARK).map(Integer::toUnsignedLong).orElse(0L),
                    a.u32(FRA_FWMASK).map(Integer::toUnsignedLong).orElse(0L),
                    (flags & FIB_RULE_INVERT) != 0));
        }
        return out;
    }

    /** Adds the rule; EEXIST if the same rule is there. */
    public void add(RoutingRule rule) {
        socket.execute("add rule " + rule, message(RTM_NEWRULE,
                NetlinkSocket.NLM_F_ACK | NetlinkSocket.NLM_F_CREATE | NetlinkSocket.NLM_F_EXCL, rule));
    }

    /** Deletes the rule; {@return false when there was none} */
    public boolean delete(RoutingRule rule) {
        try {
            socket.execute("delete rule " + rule, message(RTM_DELRULE, NetlinkSocket.NLM_F_ACK, rule));
            return true;
        } catch (NetlinkException e) {
            if (e.notFound()) {
                return false;
            }
            throw e;
        }
    }

    private static MessageWriter message(int type, int flags, RoutingRule rule) {
        int family = rule.ipv6() ? Netlink.AF_INET6 : Netlink.AF_INET;
        MessageWriter w = header(type, NetlinkSocket.NLM_F_REQUEST | flags, family,
                rule.table() < 256 ? (int) rule.table() : 0, rule.invert() ? FIB_RULE_INVERT : 0)
                .attrU32(FRA_PRIORITY, rule.priority())
                .attrU32(FRA_TABLE, (int) rule.table());
        if (rule.mark() != 0 || rule.mask() != 0) {
            w.attrU32(FRA_FWMARK, (int) rule.mark()).attrU32(FRA_FWMASK, (int) rule.mask());
        }
        return w;
    }

    /** nlmsghdr + fib_rule_hdr {family, dst_len, src_len, tos, table, res1, res2, action, flags}. */
    private static MessageWriter header(int type, int flags, int family, int table, int ruleFlags) {
        return new MessageWriter(type, flags).u8(family).u8(0).u8(0).u8(0).u8(table).u8(0).u8(0)
                .u8(type == RTM_GETRULE ? 0 : FR_ACT_TO_TBL).u32(ruleFlags);
    }

    @Override
    public void close() {
        socket.close();
    }
}
