package calico.dataplane.netfilter;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** Builds NFLOG packet messages and IP packets byte by byte, as the kernel would send them. */
final class NflogMessages {
    private NflogMessages() {
    }

    /** An IPv4 packet: 20-byte header (no options) then {@code l4}; total length as given. */
    static byte[] ipv4(String src, String dst, int protocol, int totalLength, int fragmentOffset, byte[] l4) {
        ByteBuffer b = ByteBuffer.allocate(20 + l4.length);
        b.put((byte) 0x45).put((byte) 0).putShort((short) totalLength).putShort((short) 1)
                .putShort((short) fragmentOffset).put((byte) 64).put((byte) protocol).putShort((short) 0)
                .put(addr(src)).put(addr(dst)).put(l4);
        return b.array();
    }

    /** An IPv6 packet: 40-byte header with {@code next} then {@code rest} (extension headers and L4). */
    static byte[] ipv6(String src, String dst, int next, int payloadLength, byte[] rest) {
        ByteBuffer b = ByteBuffer.allocate(40 + rest.length);
        b.putInt(0x60000000).putShort((short) payloadLength).put((byte) next).put((byte) 64)
                .put(addr(src)).put(addr(dst)).put(rest);
        return b.array();
    }

    static byte[] ports(int src, int dst, int extra) {
        return ByteBuffer.allocate(4 + extra).putShort((short) src).putShort((short) dst).array();
    }

    /** An NFULNL_MSG_PACKET message with the given payload, prefix and interfaces; seq < 0 leaves NFULA_SEQ out. */
    static byte[] packet(int family, int group, String prefix, byte[] payload, int in, int out, long seq) {
        NfRequest r = new NfRequest(NflogDecoder.NFNL_SUBSYS_ULOG, NflogDecoder.NFULNL_MSG_PACKET, 0, family, group)
                .attr(NflogDecoder.NFULA_PACKET_HDR, new byte[] {8, 0, 2, 0});
        if (in > 0) {
            r.attrBe32(NflogDecoder.NFULA_IFINDEX_INDEV, in);
        }
        if (out > 0) {
            r.attrBe32(NflogDecoder.NFULA_IFINDEX_OUTDEV, out);
        }
        if (seq >= 0) {
            r.attrBe32(NflogDecoder.NFULA_SEQ, (int) seq);
        }
        if (prefix != null) {
            byte[] p = prefix.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            r.attr(NflogDecoder.NFULA_PREFIX, java.util.Arrays.copyOf(p, p.length + 1));
        }
        return r.attr(NflogDecoder.NFULA_PAYLOAD, payload).finish(0);
    }

    /** {@return the message in a native-order buffer}, as the socket hands it over. */
    static ByteBuffer buffer(byte[] message) {
        return ByteBuffer.wrap(message).order(ByteOrder.nativeOrder());
    }

    static byte[] addr(String ip) {
        try {
            return InetAddress.getByName(ip).getAddress();
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(e);
        }
    }
}
