package calico.dataplane.netfilter;

import calico.dataplane.netlink.MessageWriter;
import java.nio.ByteBuffer;

/**
 * Builds one nfnetlink request on the netlink package's {@link MessageWriter}: {@code nlmsghdr}
 * (host order), {@code nfgenmsg} (family, version 0, resource id in network order) and
 * attributes whose headers are in host order and whose integer values are in network order, as
 * every nfnetlink subsystem expects.
 */
final class NfRequest {
    static final int NLMSG_HDRLEN = MessageWriter.NLMSG_HDRLEN;
    static final int NLA_F_NESTED = 0x8000;

    private final MessageWriter w;

    /**
     * @param subsystem {@code NFNL_SUBSYS_*}, the high byte of the message type
     * @param message the subsystem's message number, the low byte
     * @param resId {@code res_id}: the NFLOG group, 0 for conntrack
     */
    NfRequest(int subsystem, int message, int flags, int family, int resId) {
        w = new MessageWriter(subsystem << 8 | message, flags);
        w.u8(family).u8(0).raw(new byte[] {(byte) (resId >> 8), (byte) resId});
    }

    NfRequest attr(int type, byte[] value) {
        w.attr(type, value);
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
        return w.beginNested(type | NLA_F_NESTED);
    }

    NfRequest end(int start) {
        w.endNested(start);
        return this;
    }

    /** {@return the finished message} with its length and sequence number filled in. */
    byte[] finish(int seq) {
        return w.finish(seq);
    }

    static int align(int len) {
        return MessageWriter.align(len);
    }
}
