package calico.dataplane.netfilter;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;

/**
 * Reads the L3/L4 identity out of the first bytes of an IPv4 or IPv6 packet, as NFLOG copies
 * them. Ports are read for TCP, UDP, UDP-Lite, SCTP and DCCP (their first four bytes are the
 * ports); every other protocol, ICMP and ICMPv6 included, has ports 0, as do fragments after
 * the first. IPv6 extension headers (hop-by-hop, routing, destination options, fragment, AH)
 * are walked to the upper-layer protocol. A packet too short for the headers it announces is
 * {@link Malformed}.
 */
final class PacketParser {
    static final int IPPROTO_ICMP = 1;
    static final int IPPROTO_TCP = 6;
    static final int IPPROTO_UDP = 17;
    static final int IPPROTO_DCCP = 33;
    static final int IPPROTO_ICMPV6 = 58;
    static final int IPPROTO_SCTP = 132;
    static final int IPPROTO_UDPLITE = 136;
    private static final int NFPROTO_IPV4 = 2;
    private static final int NFPROTO_IPV6 = 10;
    private static final int MAX_EXTENSION_HEADERS = 8;

    /** A parsed packet: its tuple and its full IP length (from the header, not the bytes present). */
    record Parsed(FlowTuple tuple, int length) {
    }

    /** The packet is shorter than its headers say, or is not IPv4/IPv6. No stack trace: it is counted, not logged. */
    static final class Malformed extends Exception {
        Malformed(String reason) {
            super(reason, null, false, false);
        }
    }

    private PacketParser() {
    }

    /**
     * Parses the packet in {@code buf} at {@code [off, off + len)}.
     *
     * @param family the netfilter family the kernel reported (2 IPv4, 10 IPv6); any other value
     *        (bridge, netdev) means "look at the version nibble"
     */
    static Parsed parse(ByteBuffer buf, int off, int len, int family) throws Malformed {
        if (len < 1) {
            throw new Malformed("empty packet");
        }
        int version = Byte.toUnsignedInt(buf.get(off)) >>> 4;
        if (family == NFPROTO_IPV4 && version != 4 || family == NFPROTO_IPV6 && version != 6) {
            throw new Malformed("IP version " + version + " in a family " + family + " packet");
        }
        if (version == 4) {
            return ipv4(buf, off, len);
        }
        if (version == 6) {
            return ipv6(buf, off, len);
        }
        throw new Malformed("IP version " + version);
    }

    private static Parsed ipv4(ByteBuffer buf, int off, int len) throws Malformed {
        if (len < 20) {
            throw new Malformed("IPv4 header truncated: " + len + " bytes");
        }
        int ihl = (buf.get(off) & 0x0f) * 4;
        if (ihl < 20 || ihl > len) {
            throw new Malformed("IPv4 header length " + ihl + " with " + len + " bytes present");
        }
        int totalLength = NfAttrs.beShort(buf, off + 2);
        int fragmentOffset = NfAttrs.beShort(buf, off + 6) & 0x1fff;
        int protocol = Byte.toUnsignedInt(buf.get(off + 9));
        InetAddress src = address(buf, off + 12, 4);
        InetAddress dst = address(buf, off + 16, 4);
        return l4(src, dst, protocol, buf, off + ihl, len - ihl, fragmentOffset != 0, totalLength);
    }

    private static Parsed ipv6(ByteBuffer buf, int off, int len) throws Malformed {
        if (len < 40) {
            throw new Malformed("IPv6 header truncated: " + len + " bytes");
        }
        int payloadLength = NfAttrs.beShort(buf, off + 4);
        int next = Byte.toUnsignedInt(buf.get(off + 6));
        InetAddress src = address(buf, off + 8, 16);
        InetAddress dst = address(buf, off + 24, 16);
        int p = 40;
        boolean laterFragment = false;
        for (int i = 0; i < MAX_EXTENSION_HEADERS && isExtension(next); i++) {
            if (p + 8 > len) {
                throw new Malformed("IPv6 extension header " + next + " truncated");
            }
            int hdrNext = Byte.toUnsignedInt(buf.get(off + p));
            int hdrLen;
            if (next == 44) { // fragment: fixed 8 bytes
                laterFragment = (NfAttrs.beShort(buf, off + p + 2) & 0xfff8) != 0;
                hdrLen = 8;
            } else if (next == 51) { // AH: length in 4-byte units, minus 2
                hdrLen = (Byte.toUnsignedInt(buf.get(off + p + 1)) + 2) * 4;
            } else {
                hdrLen = (Byte.toUnsignedInt(buf.get(off + p + 1)) + 1) * 8;
            }
            next = hdrNext;
            p += hdrLen;
        }
        // A jumbogram says 0 here; the bytes present are then the best we know.
        int length = payloadLength == 0 ? len : 40 + payloadLength;
        return l4(src, dst, next, buf, off + p, len - p, laterFragment, length);
    }

    private static boolean isExtension(int next) {
        return next == 0 || next == 43 || next == 44 || next == 51 || next == 60;
    }

    private static Parsed l4(InetAddress src, InetAddress dst, int protocol, ByteBuffer buf, int off, int left,
            boolean laterFragment, int length) throws Malformed {
        if (laterFragment || !hasPorts(protocol)) {
            return new Parsed(new FlowTuple(src, dst, protocol, 0, 0), length);
        }
        if (left < 4) {
            throw new Malformed("protocol " + protocol + " header truncated: " + Math.max(left, 0) + " bytes");
        }
        return new Parsed(new FlowTuple(src, dst, protocol, NfAttrs.beShort(buf, off), NfAttrs.beShort(buf, off + 2)),
                length);
    }

    static boolean hasPorts(int protocol) {
        return protocol == IPPROTO_TCP || protocol == IPPROTO_UDP || protocol == IPPROTO_SCTP
                || protocol == IPPROTO_UDPLITE || protocol == IPPROTO_DCCP;
    }

    private static InetAddress address(ByteBuffer buf, int at, int size) {
        byte[] b = new byte[size];
        buf.get(at, b);
        try {
            return InetAddress.getByAddress(b);
        } catch (UnknownHostException e) {
            throw new AssertionError("4 or 16 bytes are always an address", e);
        }
    }
}
