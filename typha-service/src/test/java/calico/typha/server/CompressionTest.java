package calico.typha.server;

import static calico.typha.server.TyphaFixture.await;
import static calico.typha.server.TyphaFixture.server;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.GlobalNetworkSet;
import calico.api.model.GlobalNetworkSetSpec;
import calico.api.model.ObjectMeta;
import calico.libcalico.datastore.memory.MemoryDatastore;
import calico.libcalico.typha.proto.ClientHello;
import calico.libcalico.typha.proto.ClientMessage;
import calico.libcalico.typha.proto.CompressedKVs;
import calico.libcalico.typha.proto.KVs;
import calico.libcalico.typha.proto.Ping;
import calico.libcalico.typha.proto.ServerMessage;
import io.grpc.KnownLength;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The three compression forms a hello can ask for carry exactly the same KVs; kvs-gzip clients get
 * snapshot chunks and large delta batches as CompressedKVs made once and shared, older gzip
 * clients get gRPC's per-client compression, and uncompressed clients plain KVs.
 */
class CompressionTest {

    private MemoryDatastore ds;
    private TyphaServer typha;

    @BeforeEach
    void setUp() {
        ds = new MemoryDatastore();
        for (int i = 0; i < 300; i++) {
            ds.create(set("gns-" + i, i));
        }
        ServerSettings d = ServerSettings.defaults(0);
        // Small chunks, so the snapshot is several messages.
        typha = server(ds, new ServerSettings(0, "", 100, d.pingInterval(), d.pongTimeout(), d.maxDeltaLogUpdates(),
                16 * 1024, d.snapshotMaxAge(), 0, d.rebalanceInterval(), d.catchUpWait()));
    }

    @AfterEach
    void tearDown() {
        typha.close();
        ds.close();
    }

    private static GlobalNetworkSet set(String name, int variant) {
        return new GlobalNetworkSet(ObjectMeta.named(name),
                new GlobalNetworkSetSpec(List.of("10." + (variant % 250) + "." + (variant / 250) + ".0/24")));
    }

    private RawClient client(String host, String... accepted) {
        RawClient c = RawClient.connect(typha.port());
        c.send(ClientMessage.newBuilder().setHello(ClientHello.newBuilder().setHostname(host).setSyncerType("felix")
                .addAllAcceptedCompression(List.of(accepted))).build());
        return c;
    }

    @Test
    void everyFormCarriesTheSameKvsAndKvsGzipIsSentCompressed() throws Exception {
        try (RawClient plain = client("plain");
             RawClient grpcGzip = client("grpc-gzip", "gzip");
             RawClient shared = client("shared", "kvs-gzip", "gzip");
             RawClient shared2 = client("shared-2", "kvs-gzip")) {
            List<RawClient> all = List.of(plain, grpcGzip, shared, shared2);
            for (RawClient c : all) {
                await("in sync", c::inSync);
            }
            // Deltas: a burst (coalesced into batches large enough to compress) and a single small one.
            for (int i = 0; i < 100; i++) {
                var current = ds.get(set("gns-" + i, 0).key()).orElseThrow();
                ds.update(new GlobalNetworkSet(current.metadata(), set("gns-" + i, i + 1000).spec()));
            }
            // The burst reaches every client before the single delta, so that one travels alone.
            for (RawClient c : all) {
                await("the burst", () -> kvCount(c) == 300 + 100, Duration.ofSeconds(30), () -> "");
            }
            ds.delete(set("gns-299", 0).key(), null);
            for (RawClient c : all) {
                await("all deltas", () -> kvCount(c) == 300 + 100 + 1, Duration.ofSeconds(30), () -> "");
            }

            assertThat(hello(plain)).isEmpty();
            assertThat(hello(grpcGzip)).isEqualTo("gzip");
            assertThat(hello(shared)).isEqualTo("kvs-gzip");
            assertThat(hello(shared2)).isEqualTo("kvs-gzip");
            assertThat(plain.received).noneMatch(ServerMessage::hasCompressedKvs);
            assertThat(grpcGzip.received).noneMatch(ServerMessage::hasCompressedKvs);
            // Every snapshot chunk (several: 16 KiB chunks) and the burst's batches come compressed.
            List<ServerMessage> compressed = shared.received.stream().filter(ServerMessage::hasCompressedKvs).toList();
            assertThat(compressed.stream().filter(m -> inflate(m.getCompressedKvs()).getSnapshot()).count())
                    .isEqualTo(plain.received.stream().filter(m -> m.hasKvs() && m.getKvs().getSnapshot()).count())
                    .isGreaterThan(1);
            assertThat(compressed.stream().filter(m -> !inflate(m.getCompressedKvs()).getSnapshot())).isNotEmpty();
            // The lone deletion is too small to be worth compressing: it goes plain.
            assertThat(shared.received.stream().filter(m -> m.hasKvs() && !m.getKvs().getSnapshot())).isNotEmpty();
            for (ServerMessage m : compressed) {
                assertThat(m.getCompressedKvs().getGzip().size()).isLessThan(m.getCompressedKvs().getUncompressedSize());
            }

            List<KVs> expected = kvs(plain);
            assertThat(kvs(grpcGzip)).isEqualTo(expected);
            assertThat(kvs(shared)).isEqualTo(expected);
            assertThat(kvs(shared2)).isEqualTo(expected);
            // Compressed once: both kvs-gzip clients received byte-identical payloads.
            assertThat(shared2.received.stream().filter(ServerMessage::hasCompressedKvs).toList()).isEqualTo(compressed);
        }
    }

    @Test
    void aSharedMessageIsCompressedOnceAndEncodedOnce() throws Exception {
        EncodedMessages encoded = new EncodedMessages();
        KVs.Builder big = KVs.newBuilder().setSnapshot(true).setSequence(7);
        for (int i = 0; i < 50; i++) {
            big.addKvs(calico.libcalico.typha.KvCodec.toKv(calico.libcalico.syncer.Update.of(calico.libcalico.syncer.UpdateType.NEW, 
                    ds.get(set("gns-" + i, 0).key()).orElseThrow(), 1)));
        }
        SharedMessage m = new SharedMessage(ServerMessage.newBuilder().setKvs(big).build(), encoded);
        ServerMessage c = m.compressed();
        assertThat(c.hasCompressedKvs()).isTrue();
        assertThat(m.compressed()).isSameAs(c);
        assertThat(inflate(c.getCompressedKvs())).isEqualTo(big.build());
        assertThat(encoded.stream(c)).isInstanceOf(KnownLength.class);
        assertThat(encoded.stream(m.plain())).isInstanceOf(KnownLength.class);
        assertThat(encoded.size()).isEqualTo(2);

        SharedMessage small = new SharedMessage(ServerMessage.newBuilder().setKvs(KVs.newBuilder()
                .addKvs(big.getKvs(0))).build(), encoded);
        assertThat(small.compressed()).isSameAs(small.plain());
        SharedMessage ping = new SharedMessage(ServerMessage.newBuilder().setPing(Ping.getDefaultInstance()).build(),
                encoded);
        assertThat(ping.compressed()).isSameAs(ping.plain());
    }

    private static String hello(RawClient c) {
        return c.received.get(0).getHello().getCompression();
    }

    private static long kvCount(RawClient c) {
        return kvs(c).stream().mapToLong(KVs::getKvsCount).sum();
    }

    private static List<KVs> kvs(RawClient c) {
        List<KVs> out = new ArrayList<>();
        for (ServerMessage m : c.received) {
            if (m.hasKvs()) {
                out.add(m.getKvs());
            } else if (m.hasCompressedKvs()) {
                out.add(inflate(m.getCompressedKvs()));
            }
        }
        return out;
    }

    private static KVs inflate(CompressedKVs c) {
        try (GZIPInputStream in = new GZIPInputStream(c.getGzip().newInput())) {
            byte[] raw = in.readAllBytes();
            assertThat(raw).hasSize(c.getUncompressedSize());
            return KVs.parseFrom(raw);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
