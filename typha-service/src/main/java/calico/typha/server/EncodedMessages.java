package calico.typha.server;

import calico.libcalico.typha.proto.ServerMessage;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.grpc.protobuf.ProtoUtils;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Encodes each shared message (snapshot chunks, breadcrumbs, their compressed forms) once, not
 * once per client: the response marshaller looks a message up by identity and streams the cached
 * bytes; anything not cached (hello, ping) is encoded as usual.
 *
 * <p>Entries are keyed weakly: the bytes live exactly as long as someone (the cache, or a client
 * still streaming an older snapshot) holds the message, so a client that started from a snapshot
 * the cache has since replaced still streams shared bytes, and nothing needs releasing by hand.
 */
final class EncodedMessages implements MethodDescriptor.Marshaller<ServerMessage> {

    /** A map key that does not keep its message alive; equal only to keys for the same object. */
    private static final class WeakKey extends WeakReference<ServerMessage> {
        private final int hash;

        WeakKey(ServerMessage m, ReferenceQueue<ServerMessage> queue) {
            super(m, queue);
            hash = System.identityHashCode(m);
        }

        @Override
        public int hashCode() {
            return hash;
        }

        @Override
        public boolean equals(Object o) {
            return o == this || o instanceof WeakKey k && get() != null && k.get() == get();
        }
    }

    /** A lookup key (strong, short-lived); ConcurrentHashMap calls {@code probe.equals(stored)}. */
    private record Probe(ServerMessage message) {
        @Override
        public int hashCode() {
            return System.identityHashCode(message);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof WeakKey k ? k.get() == message : o instanceof Probe p && p.message == message;
        }
    }

    /**
     * The cached bytes of one message. {@link io.grpc.Drainable}: gRPC's framer writes them
     * straight into its transport buffer (one copy per client), instead of reading them through an
     * intermediate array as it does for a plain stream (two copies).
     */
    static final class Bytes extends ByteArrayInputStream implements KnownLength, io.grpc.Drainable {
        Bytes(byte[] b) {
            super(b);
        }

        @Override
        public int drainTo(java.io.OutputStream target) throws java.io.IOException {
            int n = count - pos;
            target.write(buf, pos, n);
            pos = count;
            return n;
        }
    }

    private final MethodDescriptor.Marshaller<ServerMessage> proto = ProtoUtils.marshaller(ServerMessage.getDefaultInstance());
    private final ConcurrentHashMap<Object, byte[]> encoded = new ConcurrentHashMap<>();
    private final ReferenceQueue<ServerMessage> collected = new ReferenceQueue<>();

    void add(ServerMessage m) {
        expunge();
        encoded.put(new WeakKey(m, collected), m.toByteArray());
    }

    void remove(ServerMessage m) {
        encoded.remove(new Probe(m));
    }

    int size() {
        expunge();
        return encoded.size();
    }

    /** {@return the bytes held, for the memory figures} */
    long bytes() {
        expunge();
        return encoded.values().stream().mapToLong(b -> b.length).sum();
    }

    private void expunge() {
        for (Reference<? extends ServerMessage> r; (r = collected.poll()) != null; ) {
            encoded.remove(r);
        }
    }

    @Override
    public InputStream stream(ServerMessage m) {
        byte[] b = encoded.get(new Probe(m));
        return b != null ? new Bytes(b) : proto.stream(m);
    }

    @Override
    public ServerMessage parse(InputStream in) {
        return proto.parse(in);
    }
}
