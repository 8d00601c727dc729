package calico.dataplane.netfilter;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Builds one nfnetlink request: {@code nlmsghdr} (host order), {@code nfgenmsg} (family,
 * version 0, resource id in network order) and attributes whose headers are in host order and
 * whose integer values are in network order, as every nfnetlink subsystem expects.
 */
final class NfRequest {
    static final int NLMSG_HDRLEN = 16;
    static final int NLA_F_NESTED = 0x8000;

    private ByteBuffer buf = ByteBuffer.allocate(128).order(ByteOrder.nativeOrder());

    /**
     * @param subsystem {@code NFNL_SUBSYS_*}, the high byte of the message type
     * @param message the subsystem's message number, the low byte
     * @param resId {@code res_id}: the NFLOG group, 0 for conntrack
     */
    NfRequest(int subsystem, int message, int flags, int family, int resId) {
        buf.putInt(0).putShort((short) (subsystem << 8 | message)).putShort((short) flags).putInt(0).putInt(0);
        buf.put((byte) family).put((byte) 0).order(ByteOrder.BIG_ENDIAN).putShort((short) resId)
                .order(ByteOrder.nativeOrder());
    }

    NfRequest attr(int type, byte[] value) {
        ensure(4 + value.length + 3);
        buf.putShort((short) (4 + value.length)).putShort((short) type).put(value);
        pad();
        return this;
    }

    NfRequest attrU8(int type, int value) {
        return attr(type, new byte[] {(byte) value});
    }

    NfRequest attrBe16(int type, int value) {
        return attr(type, new byte[] {(byte) (value >> 8), (byte) value});
    }

    NfRequest attrBe32(int type, int value) {
        return attr(type, ByteBuffer.allocate(4).putInt(value).array());
    }

    /** Opens a nested attribute (flagged {@code NLA_F_NESTED}); close with {@link #end(int)}. */
    int begin(int type) {
        ensure(4);
        int start = buf.position();
        buf.putShort((short) 0).putShort((short) (type | NLA_F_NESTED));
        return start;
    }

    NfRequest end(int start) {
        buf.putShort(start, (short) (buf.position() - start));
        return this;
    }

    /** {@return the finished message} with its length and sequence number filled in. */
    byte[] finish(int seq) {
        int len = buf.position();
        buf.putInt(0, len);
        buf.putInt(8, seq);
        return Arrays.copyOf(buf.array(), len);
    }

    static int align(int len) {
        return (len + 3) & ~3;
    }

    private void pad() {
        while ((buf.position() & 3) != 0) {
            buf.put((byte) 0);
        }
    }

    private void ensure(int more) {
        if (buf.remaining() < more) {
            ByteBuffer bigger = ByteBuffer.allocate(Math.max(buf.capacity() * 2, buf.position() + more))
                    .order(ByteOrder.nativeOrder());
            buf.flip();
            bigger.put(buf);
            buf = bigger;
        }
    }
}
