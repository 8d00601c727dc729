package calico.typha.server;

import calico.libcalico.typha.proto.CompressedKVs;
import calico.libcalico.typha.proto.ServerMessage;
import com.google.protobuf.UnsafeByteOperations;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.zip.GZIPOutputStream;

/**
 * A message every client of one cache is sent (a snapshot chunk, a breadcrumb), in two forms:
 * plain, and — for clients that accepted {@code kvs-gzip} — a {@code CompressedKVs} made once, on
 * the first demand, and then shared by all of them. Both forms are registered with
 * {@link EncodedMessages}, so each is also encoded to bytes once (for as long as this object is
 * reachable: the log, the current snapshot, or a client still streaming an older one).
 *
 * <p>Compression runs on the sender thread that first needs it, not under the cache lock; other
 * senders needing the same message wait for that one compression (at most one chunk's worth).
 */
final class SharedMessage {

    /** Below this many encoded bytes a KVs message goes plain even to kvs-gzip clients. */
    static final int MIN_COMPRESS_BYTES = 512;

    private final ServerMessage plain;
    private final EncodedMessages encoded;
    // Written under this, read without the lock once set.
    private volatile ServerMessage compressed;

    SharedMessage(ServerMessage plain, EncodedMessages encoded) {
        this.plain = plain;
        this.encoded = encoded;
        encoded.add(plain);
    }

    ServerMessage plain() {
        return plain;
    }

    /** {@return the form for kvs-gzip clients: a CompressedKVs, or the plain message when compressing does not pay} */
    ServerMessage compressed() {
        ServerMessage c = compressed;
        if (c != null) {
            return c;
        }
        synchronized (this) {
            if (compressed == null) {
                ServerMessage made = compress(plain);
                if (made != plain) {
                    encoded.add(made); // before publishing, so no sender encodes it again
                }
                compressed = made;
            }
            return compressed;
        }
    }

    static ServerMessage compress(ServerMessage m) {
        if (!m.hasKvs()) {
            return m;
        }
        byte[] raw = m.getKvs().toByteArray();
        if (raw.length < MIN_COMPRESS_BYTES) {
            return m;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(raw.length / 4 + 64);
        try (GZIPOutputStream gz = new GZIPOutputStream(out, 16 * 1024)) {
            gz.write(raw);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // in memory: cannot happen
        }
        if (out.size() >= raw.length) {
            return m;
        }
        return ServerMessage.newBuilder().setCompressedKvs(CompressedKVs.newBuilder()
                .setGzip(UnsafeByteOperations.unsafeWrap(out.toByteArray())).setUncompressedSize(raw.length)).build();
    }
}
