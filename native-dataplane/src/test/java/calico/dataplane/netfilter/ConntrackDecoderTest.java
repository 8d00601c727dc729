package calico.dataplane.netfilter;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/** The ctnetlink decoder on hand-built messages: a full entry, 32-bit counters, malformed input. */
class ConntrackDecoderTest {
    private final ConntrackDecoder decoder = new ConntrackDecoder();

    static byte[] entry(int message, FlowTuple original, FlowTuple reply, boolean counters) {
        NfRequest r = new NfRequest(ConntrackDecoder.NFNL_SUBSYS_CTNETLINK, message, 0, 2, 0);
        ConntrackDecoder.writeTuple(r, ConntrackDecoder.CTA_TUPLE_ORIG, original);
        ConntrackDecoder.writeTuple(r, ConntrackDecoder.CTA_TUPLE_REPLY, reply);
        r.attrBe32(ConntrackDecoder.CTA_STATUS, 0xe);
        r.attrBe32(ConntrackDecoder.CTA_MARK, 0x10000);
        r.attrBe32(ConntrackDecoder.CTA_ID, 0xdeadbeef);
        if (counters) {
            int o = r.begin(ConntrackDecoder.CTA_COUNTERS_ORIG);
            r.attr(ConntrackDecoder.CTA_COUNTERS_PACKETS, ByteBuffer.allocate(8).putLong(10).array());
            r.attr(ConntrackDecoder.CTA_COUNTERS_BYTES, ByteBuffer.allocate(8).putLong(5_000_000_000L).array());
            r.end(o);
            int p = r.begin(ConntrackDecoder.CTA_COUNTERS_REPLY);
            r.attrBe32(ConntrackDecoder.CTA_COUNTERS32_PACKETS, 7);
            r.attrBe32(ConntrackDecoder.CTA_COUNTERS32_BYTES, 900);
            r.end(p);
        }
        return r.finish(0);
    }

    private ConntrackEntry decode(byte[] m, int length) {
        ByteBuffer b = ByteBuffer.wrap(m).order(ByteOrder.nativeOrder());
        return decoder.decode(b.getShort(4) & 0xffff, b, 16, length);
    }

    @Test
    void decodesAnEntryWithCountersMarkIdAndStatus() throws Exception {
        FlowTuple o = new FlowTuple(InetAddress.getByName("10.0.0.1"), InetAddress.getByName("10.0.0.2"), 6, 40000, 80);
        FlowTuple r = new FlowTuple(InetAddress.getByName("10.0.0.2"), InetAddress.getByName("192.168.0.1"), 6, 80, 1024);
        byte[] m = entry(ConntrackDecoder.IPCTNL_MSG_CT_DELETE, o, r, true);
        assertThat(decode(m, m.length)).isEqualTo(new ConntrackEntry(o, r, new ConntrackCounters(10, 5_000_000_000L),
                new ConntrackCounters(7, 900), 0x10000, 0xdeadbeefL, 0xe, true));

        byte[] live = entry(ConntrackDecoder.IPCTNL_MSG_CT_NEW, o, r, false);
        ConntrackEntry e = decode(live, live.length);
        assertThat(e.destroyed()).isFalse();
        assertThat(e.originalCounters()).isEqualTo(ConntrackCounters.ZERO);
        assertThat(e.hasStatus(ConntrackEntry.STATUS_CONFIRMED | ConntrackEntry.STATUS_ASSURED)).isTrue();
    }

    @Test
    void tcpStateFromProtoinfoAndDnatFromTheReplyTuple() throws Exception {
        FlowTuple o = new FlowTuple(InetAddress.getByName("10.0.0.1"), InetAddress.getByName("10.96.0.10"), 6, 40000,
                443);
        FlowTuple r = new FlowTuple(InetAddress.getByName("10.0.0.7"), InetAddress.getByName("10.0.0.1"), 6, 8443,
                40000);
        for (int state : new int[] {ConntrackEntry.TCP_ESTABLISHED, ConntrackEntry.TCP_TIME_WAIT}) {
            NfRequest q = new NfRequest(ConntrackDecoder.NFNL_SUBSYS_CTNETLINK, ConntrackDecoder.IPCTNL_MSG_CT_NEW, 0,
                    2, 0);
            ConntrackDecoder.writeTuple(q, ConntrackDecoder.CTA_TUPLE_ORIG, o);
            ConntrackDecoder.writeTuple(q, ConntrackDecoder.CTA_TUPLE_REPLY, r);
            int pi = q.begin(ConntrackDecoder.CTA_PROTOINFO);
            int tcp = q.begin(ConntrackDecoder.CTA_PROTOINFO_TCP);
            q.attrU8(ConntrackDecoder.CTA_PROTOINFO_TCP_STATE, state);
            q.end(tcp);
            q.end(pi);
            byte[] m = q.finish(0);
            ConntrackEntry e = decode(m, m.length);
            assertThat(e.tcpState()).isEqualTo(state);
            assertThat(e.tcpClosed()).isEqualTo(state == ConntrackEntry.TCP_TIME_WAIT);
            // The service VIP 10.96.0.10:443 was rewritten to the backend 10.0.0.7:8443.
            assertThat(e.dnat()).isTrue();
            assertThat(e.originalWithoutDnat()).isEqualTo(new FlowTuple(o.src(), r.src(), 6, 40000, 8443));
        }
        byte[] plain = entry(ConntrackDecoder.IPCTNL_MSG_CT_NEW, o, o.reversed(), false);
        ConntrackEntry e = decode(plain, plain.length);
        assertThat(e.tcpState()).isEqualTo(ConntrackEntry.NO_TCP_STATE);
        assertThat(e.tcpClosed()).isFalse();
        assertThat(e.dnat()).isFalse();
        assertThat(e.originalWithoutDnat()).isSameAs(e.original());
    }

    @Test
    void icmpTuplesHaveNoPorts() throws Exception {
        // The kernel sends ICMP id/type/code, never ports; a stray port attribute is ignored too.
        FlowTuple withPorts = new FlowTuple(InetAddress.getByName("fd00::1"), InetAddress.getByName("fd00::2"), 58, 5, 6);
        byte[] m = entry(ConntrackDecoder.IPCTNL_MSG_CT_NEW, withPorts, withPorts.reversed(), false);
        assertThat(decode(m, m.length).original()).isEqualTo(new FlowTuple(withPorts.src(), withPorts.dst(), 58, 0, 0));
    }

    @Test
    void truncatedMessagesAreCountedNeverThrown() throws Exception {
        FlowTuple o = new FlowTuple(InetAddress.getByName("10.0.0.1"), InetAddress.getByName("10.0.0.2"), 17, 1, 2);
        byte[] m = entry(ConntrackDecoder.IPCTNL_MSG_CT_NEW, o, o.reversed(), true);
        int decoded = 0;
        for (int len = 16; len < m.length; len++) {
            if (decode(m, len) != null) {
                decoded++; // a cut after both tuples, between attributes, still names the connection
            }
        }
        assertThat(decoder.malformed() + decoded).isEqualTo(m.length - 16);
        assertThat(decoder.malformed()).isPositive();
        // Not a conntrack entry at all: neither decoded nor malformed.
        long before = decoder.malformed();
        byte[] other = new NfRequest(4, 0, 0, 2, 1).finish(0);
        assertThat(decode(other, other.length)).isNull();
        assertThat(decoder.malformed()).isEqualTo(before);
    }
}
