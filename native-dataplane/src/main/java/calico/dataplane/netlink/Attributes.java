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
    private final Map<Integer, byte[]> values;

    private Attributes(Map<Integer, byte[]> values) {
        this.values = values;
    }

    /** Parses attributes from {@code buf}'s position to its limit ({@link NetlinkAttribute#parseAll}). */
    static Attributes parse(ByteBuffer buf) {
        Map<Integer, byte[]> out = new HashMap<>();
        NetlinkAttribute.parseAll(buf).forEach(a -> out.put(a.type(), a.value()));
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
