package calico.dataplane.netfilter;

import java.net.InetAddress;
import java.nio.ByteBuffer;

/**
 * Turns ctnetlink messages (dump replies, NEW and DESTROY events) into {@link ConntrackEntry}s,
 * and builds the tuple attributes of requests. Stateless apart from the malformed count.
 */
final class ConntrackDecoder {
    static final int NFNL_SUBSYS_CTNETLINK = 1;
    static final int IPCTNL_MSG_CT_NEW = 0;
    static final int IPCTNL_MSG_CT_GET = 1;
    static final int IPCTNL_MSG_CT_DELETE = 2;

    static final int CTA_TUPLE_ORIG = 1;
    static final int CTA_TUPLE_REPLY = 2;
    static final int CTA_STATUS = 3;
    static final int CTA_PROTOINFO = 4;
    static final int CTA_PROTOINFO_TCP = 1;
    static final int CTA_PROTOINFO_TCP_STATE = 1;
    static final int CTA_MARK = 8;
    static final int CTA_COUNTERS_ORIG = 9;
    static final int CTA_COUNTERS_REPLY = 10;
    static final int CTA_ID = 12;

    static final int CTA_TUPLE_IP = 1;
    static final int CTA_TUPLE_PROTO = 2;
    static final int CTA_IP_V4_SRC = 1;
    static final int CTA_IP_V4_DST = 2;
    static final int CTA_IP_V6_SRC = 3;
    static final int CTA_IP_V6_DST = 4;
    static final int CTA_PROTO_NUM = 1;
    static final int CTA_PROTO_SRC_PORT = 2;
    static final int CTA_PROTO_DST_PORT = 3;

    static final int CTA_COUNTERS_PACKETS = 1;
    static final int CTA_COUNTERS_BYTES = 2;
    static final int CTA_COUNTERS32_PACKETS = 3;
    static final int CTA_COUNTERS32_BYTES = 4;

    private static final int NFGENMSG_LEN = 4;

    private long malformed;

    /**
     * Decodes one message (payload {@code [from, to)} of {@code buf}).
     *
     * @return the entry, or null when the message is not a conntrack entry or is malformed (counted)
     */
    ConntrackEntry decode(int type, ByteBuffer buf, int from, int to) {
        int message = type & 0xff;
        if (type >> 8 != NFNL_SUBSYS_CTNETLINK || message != IPCTNL_MSG_CT_NEW && message != IPCTNL_MSG_CT_DELETE) {
            return null;
        }
        if (to - from < NFGENMSG_LEN) {
            malformed++;
            return null;
        }
        NfAttrs a = NfAttrs.parse(buf, from + NFGENMSG_LEN, to);
        FlowTuple original = tuple(a.nested(CTA_TUPLE_ORIG));
        FlowTuple reply = tuple(a.nested(CTA_TUPLE_REPLY));
        if (a.truncated() || original == null || reply == null) {
            malformed++;
            return null;
        }
        return new ConntrackEntry(original, reply, counters(a.nested(CTA_COUNTERS_ORIG)),
                counters(a.nested(CTA_COUNTERS_REPLY)), a.be32(CTA_MARK, 0), a.be32(CTA_ID, 0), a.be32(CTA_STATUS, 0),
                message == IPCTNL_MSG_CT_DELETE, tcpState(a.nested(CTA_PROTOINFO)));
    }

    /** CTA_PROTOINFO → CTA_PROTOINFO_TCP → CTA_PROTOINFO_TCP_STATE (u8); none for other protocols. */
    private static int tcpState(NfAttrs protoinfo) {
        if (protoinfo == null || protoinfo.truncated()) {
            return ConntrackEntry.NO_TCP_STATE;
        }
        NfAttrs tcp = protoinfo.nested(CTA_PROTOINFO_TCP);
        if (tcp == null || tcp.truncated() || !tcp.has(CTA_PROTOINFO_TCP_STATE)) {
            return ConntrackEntry.NO_TCP_STATE;
        }
        return tcp.u8(CTA_PROTOINFO_TCP_STATE, ConntrackEntry.NO_TCP_STATE);
    }

    long malformed() {
        return malformed;
    }

    private static FlowTuple tuple(NfAttrs t) {
        if (t == null || t.truncated()) {
            return null;
        }
        NfAttrs ip = t.nested(CTA_TUPLE_IP);
        NfAttrs proto = t.nested(CTA_TUPLE_PROTO);
        if (ip == null || proto == null || ip.truncated() || proto.truncated() || !proto.has(CTA_PROTO_NUM)) {
            return null;
        }
        InetAddress src = ip.has(CTA_IP_V4_SRC) ? ip.address(CTA_IP_V4_SRC) : ip.address(CTA_IP_V6_SRC);
        InetAddress dst = ip.has(CTA_IP_V4_DST) ? ip.address(CTA_IP_V4_DST) : ip.address(CTA_IP_V6_DST);
        if (src == null || dst == null) {
            return null;
        }
        int protocol = proto.u8(CTA_PROTO_NUM, 0);
        if (!PacketParser.hasPorts(protocol)) {
            return new FlowTuple(src, dst, protocol, 0, 0);
        }
        return new FlowTuple(src, dst, protocol, proto.be16(CTA_PROTO_SRC_PORT, 0), proto.be16(CTA_PROTO_DST_PORT, 0));
    }

    private static ConntrackCounters counters(NfAttrs c) {
        if (c == null) {
            return ConntrackCounters.ZERO;
        }
        long packets = c.has(CTA_COUNTERS_PACKETS) ? c.be64(CTA_COUNTERS_PACKETS, 0) : c.be32(CTA_COUNTERS32_PACKETS, 0);
        long bytes = c.has(CTA_COUNTERS_BYTES) ? c.be64(CTA_COUNTERS_BYTES, 0) : c.be32(CTA_COUNTERS32_BYTES, 0);
        return new ConntrackCounters(packets, bytes);
    }

    /** Writes {@code tuple} as a nested CTA_TUPLE_* attribute of {@code type}. */
    static void writeTuple(NfRequest r, int type, FlowTuple tuple) {
        boolean v4 = tuple.src().getAddress().length == 4;
        int t = r.begin(type);
        int ip = r.begin(CTA_TUPLE_IP);
        r.attr(v4 ? CTA_IP_V4_SRC : CTA_IP_V6_SRC, tuple.src().getAddress());
        r.attr(v4 ? CTA_IP_V4_DST : CTA_IP_V6_DST, tuple.dst().getAddress());
        r.end(ip);
        int proto = r.begin(CTA_TUPLE_PROTO);
        r.attrU8(CTA_PROTO_NUM, tuple.protocol());
        r.attrBe16(CTA_PROTO_SRC_PORT, tuple.srcPort());
        r.attrBe16(CTA_PROTO_DST_PORT, tuple.dstPort());
        r.end(proto);
        r.end(t);
    }
}
