package calico.dataplane.netlink;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Builds one netlink request: a 16-byte {@code nlmsghdr}, the fixed family header written by
 * the caller field by field, then {@code rtattr}s (2-byte length, 2-byte type, value, padded
 * to 4 bytes). Host byte order throughout, as rtnetlink expects; length and sequence number
 * are filled in by {@link #finish(int)}. Public for nfnetlink's requests (netfilter package),
 * which are these messages with a header and value byte order of their own.
 */
public final class MessageWriter {
    public static final int NLMSG_HDRLEN = 16;

    private ByteBuffer buf = ByteBuffer.allocate(256).order(ByteOrder.nativeOrder());

    public MessageWriter(int type, int flags) {
        buf.putInt(0).putShort((short) type).putShort((short) flags).putInt(0).putInt(0);
    }

    /** A writer of a payload alone (no {@code nlmsghdr}): its bytes go out with {@link #raw}; read with {@link #bytes}. */
    private MessageWriter() {
    }

    static MessageWriter payload() {
        return new MessageWriter();
    }

    /** {@return the bytes written so far} */
    byte[] bytes() {
        return Arrays.copyOf(buf.array(), buf.position());
    }

    public MessageWriter u8(int v) {
        ensure(1);
        buf.put((byte) v);
        return this;
    }

    MessageWriter u16(int v) {
        ensure(2);
        buf.putShort((short) v);
        return this;
    }

    MessageWriter u32(int v) {
        ensure(4);
        buf.putInt(v);
        return this;
    }

    /** Bytes as they are (a payload encoded elsewhere, already aligned). */
    public MessageWriter raw(byte[] bytes) {
        ensure(bytes.length);
        buf.put(bytes);
        return this;
    }

    public MessageWriter attr(int type, byte[] value) {
        int len = 4 + value.length;
        ensure(align(len));
        buf.putShort((short) len).putShort((short) type).put(value);
        pad();
        return this;
    }

    MessageWriter attrU16(int type, int value) {
        return attr(type, ByteBuffer.allocate(2).order(ByteOrder.nativeOrder()).putShort((short) value).array());
    }

    MessageWriter attrU32(int type, int value) {
        return attr(type, ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(value).array());
    }

    /** A NUL-terminated string, as the kernel's NLA_STRING/NLA_NUL_STRING policies accept. */
    MessageWriter attrString(int type, String value) {
        byte[] s = value.getBytes(StandardCharsets.UTF_8);
        return attr(type, Arrays.copyOf(s, s.length + 1));
    }

    /** Opens a nested attribute; close it with {@link #endNested(int)} passing the result. */
    public int beginNested(int type) {
        ensure(4);
        int start = buf.position();
        buf.putShort((short) 0).putShort((short) type);
        return start;
    }

    public void endNested(int start) {
        buf.putShort(start, (short) (buf.position() - start));
    }

    public byte[] finish(int seq) {
        int len = buf.position();
        buf.putInt(0, len);
        buf.putInt(8, seq);
        return Arrays.copyOf(buf.array(), len);
    }

    public static int align(int len) {
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
