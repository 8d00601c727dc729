package calico.dataplane.netlink;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The {@code rtattr}s of one message (or one nested attribute), by type; a repeated type keeps
 * the last value. Malformed trailing bytes (a length shorter than the header or running past
 * the end) stop parsing instead of throwing: the kernel never sends them, and a dump must not
 * fail on one odd entry.
 */
final class Attributes {
    private static final int NLA_TYPE_MASK = 0x3fff; // strips NLA_F_NESTED / NLA_F_NET_BYTEORDER

    private final Map<Integer, byte[]> values;

    private Attributes(Map<Integer, byte[]> values) {
        this.values = values;
    }

    /** Parses attributes from {@code buf}'s position to its limit. */
    static Attributes parse(ByteBuffer buf) {
        ByteBuffer b = buf.slice().order(ByteOrder.nativeOrder());
        Map<Integer, byte[]> out = new HashMap<>();
        while (b.remaining() >= 4) {
            int start = b.position();
            int len = Short.toUnsignedInt(b.getShort());
            int type = Short.toUnsignedInt(b.getShort()) & NLA_TYPE_MASK;
            if (len < 4 || start + len > b.limit()) {
                break;
            }
            byte[] v = new byte[len - 4];
            b.get(v);
            out.put(type, v);
            b.position(Math.min(b.limit(), start + MessageWriter.align(len)));
        }
        return new Attributes(out);
    }

    boolean has(int type) {
        return values.containsKey(type);
    }

    Optional<byte[]> bytes(int type) {
        return Optional.ofNullable(values.get(type));
    }

    Optional<Integer> u32(int type) {
        byte[] v = values.get(type);
        if (v == null || v.length < 4) {
            return Optional.empty();
        }
        return Optional.of(ByteBuffer.wrap(v).order(ByteOrder.nativeOrder()).getInt());
    }

    Optional<String> string(int type) {
        byte[] v = values.get(type);
        if (v == null) {
            return Optional.empty();
        }
        int n = 0;
        while (n < v.length && v[n] != 0) {
            n++;
        }
        return Optional.of(new String(v, 0, n, StandardCharsets.UTF_8));
    }

    Optional<InetAddress> address(int type) {
        byte[] v = values.get(type);
        if (v == null || (v.length != 4 && v.length != 16)) {
            return Optional.empty();
        }
        try {
            return Optional.of(InetAddress.getByAddress(v));
        } catch (UnknownHostException e) {
            throw new AssertionError("4 or 16 bytes are always an address", e);
        }
    }

    Optional<Attributes> nested(int type) {
        byte[] v = values.get(type);
        return v == null ? Optional.empty() : Optional.of(parse(ByteBuffer.wrap(v)));
    }
}
