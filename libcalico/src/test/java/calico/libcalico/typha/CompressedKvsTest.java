package calico.libcalico.typha;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.libcalico.typha.proto.CompressedKVs;
import calico.libcalico.typha.proto.KV;
import calico.libcalico.typha.proto.KVs;
import com.google.protobuf.ByteString;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;

/** {@link KvsInflater}: the client side of kvs-gzip, including what it refuses. */
class CompressedKvsTest {

    private static final KVs SAMPLE = KVs.newBuilder().setSequence(12).setSnapshot(true)
            .addKvs(KV.newBuilder().setKind("GlobalNetworkSet").setName("a").setRevision(3)
                    .setValueJson(ByteString.copyFromUtf8("{\"kind\":\"GlobalNetworkSet\"}")))
            .build();

    private static ByteString gzip(byte[] raw) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
            gz.write(raw);
        }
        return ByteString.copyFrom(out.toByteArray());
    }

    @Test
    void inflatesToTheKvsItCarries() throws IOException {
        byte[] raw = SAMPLE.toByteArray();
        CompressedKVs c = CompressedKVs.newBuilder().setGzip(gzip(raw)).setUncompressedSize(raw.length).build();
        assertThat(new KvsInflater().inflate(c)).isEqualTo(SAMPLE);
    }

    @Test
    void refusesADeclaredSizeOverTheLimit() throws IOException {
        byte[] raw = SAMPLE.toByteArray();
        CompressedKVs c = CompressedKVs.newBuilder().setGzip(gzip(raw))
                .setUncompressedSize(KvsInflater.MAX_INFLATED_BYTES + 1).build();
        assertThatThrownBy(() -> new KvsInflater().inflate(c)).isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("CompressedKVs.uncompressed_size: ").hasMessageContaining("over the limit");
        CompressedKVs huge = c.toBuilder().setUncompressedSize(-1).build(); // 4 GiB - 1 as uint32
        assertThatThrownBy(() -> new KvsInflater().inflate(huge)).hasMessageContaining("4294967295 bytes is over the limit");
    }

    @Test
    void refusesALengthThatDiffersFromTheDeclaredOne() throws IOException {
        byte[] raw = SAMPLE.toByteArray();
        for (int declared : new int[] {raw.length - 1, raw.length + 1}) {
            CompressedKVs c = CompressedKVs.newBuilder().setGzip(gzip(raw)).setUncompressedSize(declared).build();
            assertThatThrownBy(() -> new KvsInflater().inflate(c)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("differs from uncompressed_size " + declared);
        }
    }

    @Test
    void oneInflaterServesManyMessagesAndRefusesACorruptTrailer() throws IOException {
        byte[] raw = SAMPLE.toByteArray();
        CompressedKVs c = CompressedKVs.newBuilder().setGzip(gzip(raw)).setUncompressedSize(raw.length).build();
        try (KvsInflater inflater = new KvsInflater()) {
            for (int i = 0; i < 3; i++) {
                assertThat(inflater.inflate(c)).isEqualTo(SAMPLE);
            }
            byte[] bad = c.getGzip().toByteArray();
            bad[bad.length - 8] ^= 1; // the CRC32
            CompressedKVs corrupt = c.toBuilder().setGzip(ByteString.copyFrom(bad)).build();
            assertThatThrownBy(() -> inflater.inflate(corrupt)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("CRC32");
            assertThat(inflater.inflate(c)).isEqualTo(SAMPLE);
        }
    }

    @Test
    void refusesBytesThatAreNotGzip() {
        CompressedKVs c = CompressedKVs.newBuilder().setGzip(ByteString.copyFromUtf8("not gzip at all"))
                .setUncompressedSize(10).build();
        assertThatThrownBy(() -> new KvsInflater().inflate(c)).isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("CompressedKVs.gzip: ");
    }

    @Test
    void offersSharedCompressionFirstAndGrpcGzipForOlderServers() {
        assertThat(TyphaClient.ACCEPTED_COMPRESSION).containsExactly("kvs-gzip", "gzip");
    }
}
