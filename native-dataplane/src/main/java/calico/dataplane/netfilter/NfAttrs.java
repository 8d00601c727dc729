package calico.dataplane.netfilter;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The attributes of one nfnetlink message (or nested attribute), indexed by type without
 * copying: offsets into the receive buffer. Headers are host order, integer values network
 * order. Types above {@link #MAX_TYPE} are ignored (no subsystem used here defines them); a
 * repeated type keeps the last. A length running past the end stops parsing and marks the set
 * {@link #truncated()}, so the caller can count the message as malformed rather than throw.
 */
final class NfAttrs {
    static final int MAX_TYPE = 31;
    private static final int TYPE_MASK = 0x3fff; // strips NLA_F_NESTED / NLA_F_NET_BYTEORDER

    private final ByteBuffer buf;
    private final int[] offset = new int[MAX_TYPE + 1];
    private final int[] length = new int[MAX_TYPE + 1];
    private boolean truncated;

    private NfAttrs(ByteBuffer buf) {
        this.buf = buf;
        Arrays.fill(offset, -1);
    }

    /** Indexes the attributes in {@code buf} between {@code from} and {@code to} (absolute positions). */
    static NfAttrs parse(ByteBuffer buf, int from, int to) {
        NfAttrs a = new NfAttrs(buf);
        int p = from;
        while (p + 4 <= to) {
            int len = Short.toUnsignedInt(buf.getShort(p));
            int type = Short.toUnsignedInt(buf.getShort(p + 2)) & TYPE_MASK;
            if (len < 4 || p + len > to) {
                a.truncated = true;
                break;
            }
            if (type <= MAX_TYPE) {
                a.offset[type] = p + 4;
                a.length[type] = len - 4;
            }
            p += NfRequest.align(len);
        }
        return a;
    }

    boolean truncated() {
        return truncated;
    }

    boolean has(int type) {
        return offset[type] >= 0;
    }

    /** {@return the value's absolute offset in the buffer}, -1 when absent. */
    int offset(int type) {
        return offset[type];
    }

    int length(int type) {
        return offset[type] < 0 ? 0 : length[type];
    }

    ByteBuffer buffer() {
        return buf;
    }

    int u8(int type, int absent) {
        return length(type) >= 1 ? Byte.toUnsignedInt(buf.get(offset[type])) : absent;
    }

    int be16(int type, int absent) {
        return length(type) >= 2 ? beShort(buf, offset[type]) : absent;
    }

    long be32(int type, long absent) {
        return length(type) >= 4 ? Integer.toUnsignedLong(beInt(buf, offset[type])) : absent;
    }

    long be64(int type, long absent) {
        return length(type) >= 8 ? beLong(buf, offset[type]) : absent;
    }

    /** A NUL-terminated (or unterminated) string value, cut at the first NUL; null when absent. */
    String string(int type) {
        if (offset[type] < 0) {
            return null;
        }
        int start = offset[type];
        int n = 0;
        while (n < length[type] && buf.get(start + n) != 0) {
            n++;
        }
        byte[] b = new byte[n];
        buf.get(start, b);
        return new String(b, StandardCharsets.UTF_8);
    }

    /** A 4- or 16-byte address value; null when absent or of another size. */
    InetAddress address(int type) {
        int len = length(type);
        if (offset[type] < 0 || (len != 4 && len != 16)) {
            return null;
        }
        byte[] b = new byte[len];
        buf.get(offset[type], b);
        try {
            return InetAddress.getByAddress(b);
        } catch (UnknownHostException e) {
            throw new AssertionError("4 or 16 bytes are always an address", e);
        }
    }

    /** The nested attributes of {@code type}; null when absent. */
    NfAttrs nested(int type) {
        return offset[type] < 0 ? null : parse(buf, offset[type], offset[type] + length[type]);
    }

    static int beInt(ByteBuffer b, int at) {
        int v = b.getInt(at);
        return b.order() == ByteOrder.BIG_ENDIAN ? v : Integer.reverseBytes(v);
    }

    static long beLong(ByteBuffer b, int at) {
        long v = b.getLong(at);
        return b.order() == ByteOrder.BIG_ENDIAN ? v : Long.reverseBytes(v);
    }

    static int beShort(ByteBuffer b, int at) {
        short v = b.getShort(at);
        return Short.toUnsignedInt(b.order() == ByteOrder.BIG_ENDIAN ? v : Short.reverseBytes(v));
    }
}
