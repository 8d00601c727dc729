package calico.typha.server;

import static org.assertj.core.api.Assertions.assertThat;

import calico.libcalico.typha.proto.Ping;
import calico.libcalico.typha.proto.ServerMessage;
import io.grpc.KnownLength;
import org.junit.jupiter.api.Test;

/** Shared messages are streamed from bytes encoded once; equal but distinct messages are not. */
class EncodedMessagesTest {

    @Test
    void cachedByIdentityAndEncodedLikeProtobuf() throws Exception {
        EncodedMessages m = new EncodedMessages();
        ServerMessage shared = ServerMessage.newBuilder().setPing(Ping.newBuilder().setSentUnixNanos(42)).build();
        ServerMessage equalCopy = shared.toBuilder().build();
        m.add(shared);
        var cached = m.stream(shared);
        assertThat(cached).isInstanceOf(KnownLength.class);
        assertThat(cached.readAllBytes()).isEqualTo(shared.toByteArray());
        // Drained (as gRPC's framer writes it): the same bytes in one write, then nothing left.
        var drained = new java.io.ByteArrayOutputStream();
        var again = m.stream(shared);
        assertThat(again).isInstanceOf(io.grpc.Drainable.class);
        assertThat(((io.grpc.Drainable) again).drainTo(drained)).isEqualTo(shared.getSerializedSize());
        assertThat(drained.toByteArray()).isEqualTo(shared.toByteArray());
        assertThat(again.available()).isZero();
        assertThat(m.stream(equalCopy).getClass()).isNotEqualTo(cached.getClass());
        assertThat(m.parse(m.stream(equalCopy))).isEqualTo(shared);
        m.remove(shared);
        assertThat(m.size()).isZero();
        assertThat(m.parse(m.stream(shared))).isEqualTo(shared);
    }
}
