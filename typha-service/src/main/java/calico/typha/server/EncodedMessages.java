package calico.typha.server;

import calico.libcalico.typha.proto.ServerMessage;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.grpc.protobuf.ProtoUtils;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Encodes each shared message (snapshot chunks, breadcrumbs) once, not once per client: the
 * response marshaller looks a message up by identity and streams the cached bytes; anything
 * not cached (hello, ping, a breadcrumb already evicted) is encoded as usual.
 */
final class EncodedMessages implements MethodDescriptor.Marshaller<ServerMessage> {

    private record Identity(ServerMessage message) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Identity i && i.message == message;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(message);
        }
    }

    private static final class Bytes extends ByteArrayInputStream implements KnownLength {
        Bytes(byte[] b) {
            super(b);
        }
    }

    private final MethodDescriptor.Marshaller<ServerMessage> proto = ProtoUtils.marshaller(ServerMessage.getDefaultInstance());
    private final ConcurrentHashMap<Identity, byte[]> encoded = new ConcurrentHashMap<>();

    void add(ServerMessage m) {
        encoded.put(new Identity(m), m.toByteArray());
    }

    void remove(ServerMessage m) {
        encoded.remove(new Identity(m));
    }

    int size() {
        return encoded.size();
    }

    @Override
    public InputStream stream(ServerMessage m) {
        byte[] b = encoded.get(new Identity(m));
        return b != null ? new Bytes(b) : proto.stream(m);
    }

    @Override
    public ServerMessage parse(InputStream in) {
        return proto.parse(in);
    }
}
