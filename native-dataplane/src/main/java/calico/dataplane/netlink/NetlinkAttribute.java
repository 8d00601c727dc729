package calico.dataplane.netlink;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * One netlink attribute ({@code nlattr}/{@code rtattr}) as it came: its type with the
 * {@code NLA_F_NESTED}/{@code NLA_F_NET_BYTEORDER} flags stripped, and its value. For messages
 * whose attributes repeat a type (arrays of nested attributes, as generic netlink families send).
 */
public record NetlinkAttribute(int type, byte[] value) {
    private static final int NLA_TYPE_MASK = 0x3fff;

    /**
     * {@return the attributes from {@code buf}'s position to its limit, in order}. Malformed
     * trailing bytes (a length shorter than the header or running past the end) stop parsing
     * instead of throwing: the kernel never sends them, and a dump must not fail on one odd entry.
     */
    public static List<NetlinkAttribute> parseAll(ByteBuffer buf) {
        ByteBuffer b = buf.slice().order(ByteOrder.nativeOrder());
        List<NetlinkAttribute> out = new ArrayList<>();
        while (b.remaining() >= 4) {
            int start = b.position();
            int len = Short.toUnsignedInt(b.getShort());
            int type = Short.toUnsignedInt(b.getShort()) & NLA_TYPE_MASK;
            if (len < 4 || start + len > b.limit()) {
                break;
            }
            byte[] v = new byte[len - 4];
            b.get(v);
            out.add(new NetlinkAttribute(type, v));
            b.position(Math.min(b.limit(), start + MessageWriter.align(len)));
        }
        return out;
    }

    /** {@return the attributes nested in this one's value} */
    public List<NetlinkAttribute> nested() {
        return parseAll(ByteBuffer.wrap(value));
    }

    public int u16() {
        return Short.toUnsignedInt(ByteBuffer.wrap(value).order(ByteOrder.nativeOrder()).getShort());
    }

    public int u32() {
        return ByteBuffer.wrap(value).order(ByteOrder.nativeOrder()).getInt();
    }
}
