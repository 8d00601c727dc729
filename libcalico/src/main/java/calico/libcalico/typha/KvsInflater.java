package calico.libcalico.typha;

import calico.libcalico.typha.proto.CompressedKVs;
import calico.libcalico.typha.proto.KVs;
import com.google.protobuf.InvalidProtocolBufferException;
import java.util.zip.CRC32;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

/**
 * Inflates the {@code CompressedKVs} of one stream, reusing one {@link Inflater} (a fresh
 * {@code GZIPInputStream} per message allocates and initialises zlib each time, which for a
 * typical delta batch of a few KiB costs as much as the inflating). Checks what gzip promises
 * (header, CRC32, length) and what the server declared ({@code uncompressed_size}). Not
 * thread-safe: one per stream reader; {@link #close()} frees zlib's memory.
 */
public final class KvsInflater implements AutoCloseable {

    /** Bound on one inflated message (a snapshot chunk is about 256 KiB; a breadcrumb at most 1 000 KVs). */
    public static final int MAX_INFLATED_BYTES = 64 * 1024 * 1024;

    private static final int FHCRC = 2;
    private static final int FEXTRA = 4;
    private static final int FNAME = 8;
    private static final int FCOMMENT = 16;

    private final Inflater inflater = new Inflater(true);
    private final CRC32 crc = new CRC32();

    /** {@return the KVs a CompressedKVs carries}; anything malformed is an {@link IllegalStateException} naming the field. */
    public KVs inflate(CompressedKVs c) {
        try {
            return KVs.parseFrom(inflateBytes(c));
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("CompressedKVs.gzip: inflated bytes are not a KVs message: " + e.getMessage(), e);
        }
    }

    /** {@return the serialised KVs a CompressedKVs carries, checked as {@link #inflate} does} */
    public byte[] inflateBytes(CompressedKVs c) {
        int size = c.getUncompressedSize();
        if (size < 0 || size > MAX_INFLATED_BYTES) {
            throw new IllegalStateException("CompressedKVs.uncompressed_size: " + Integer.toUnsignedString(size)
                    + " bytes is over the limit of " + MAX_INFLATED_BYTES);
        }
        byte[] gz = c.getGzip().toByteArray();
        int body = headerLength(gz);
        byte[] out = new byte[size];
        inflater.reset();
        inflater.setInput(gz, body, gz.length - body);
        int n;
        try {
            n = inflater.inflate(out);
            if (n == size && !inflater.finished()) {
                // Exactly full: anything more than the end of the stream is too much.
                byte[] probe = new byte[1];
                if (inflater.inflate(probe) > 0 || !inflater.finished()) {
                    throw lengthDiffers(size);
                }
            }
        } catch (DataFormatException e) {
            throw new IllegalStateException("CompressedKVs.gzip: " + e.getMessage(), e);
        }
        if (n != size || !inflater.finished()) {
            throw lengthDiffers(size);
        }
        int trailer = gz.length - inflater.getRemaining();
        if (gz.length - trailer != 8) {
            throw new IllegalStateException("CompressedKVs.gzip: " + (gz.length - trailer)
                    + " bytes after the deflate stream, expected the 8-byte gzip trailer");
        }
        crc.reset();
        crc.update(out, 0, n);
        if ((int) crc.getValue() != le32(gz, trailer) || n != le32(gz, trailer + 4)) {
            throw new IllegalStateException("CompressedKVs.gzip: CRC32 or length in the gzip trailer does not match");
        }
        return out;
    }

    private static IllegalStateException lengthDiffers(int size) {
        return new IllegalStateException("CompressedKVs: inflated length differs from uncompressed_size " + size);
    }

    /** {@return where the deflate data starts, after the gzip header (RFC 1952 2.3)} */
    private static int headerLength(byte[] gz) {
        if (gz.length < 18 || (gz[0] & 0xff) != 0x1f || (gz[1] & 0xff) != 0x8b || gz[2] != 8) {
            throw new IllegalStateException("CompressedKVs.gzip: not in gzip format");
        }
        int flags = gz[3] & 0xff;
        int at = 10;
        if ((flags & FEXTRA) != 0) {
            at += 2 + ((gz[at] & 0xff) | (gz[at + 1] & 0xff) << 8);
        }
        if ((flags & FNAME) != 0) {
            at = skipZeroTerminated(gz, at);
        }
        if ((flags & FCOMMENT) != 0) {
            at = skipZeroTerminated(gz, at);
        }
        if ((flags & FHCRC) != 0) {
            at += 2;
        }
        if (at + 8 > gz.length) {
            throw new IllegalStateException("CompressedKVs.gzip: truncated");
        }
        return at;
    }

    private static int skipZeroTerminated(byte[] gz, int at) {
        while (at < gz.length && gz[at] != 0) {
            at++;
        }
        return at + 1;
    }

    private static int le32(byte[] b, int at) {
        return (b[at] & 0xff) | (b[at + 1] & 0xff) << 8 | (b[at + 2] & 0xff) << 16 | (b[at + 3] & 0xff) << 24;
    }

    @Override
    public void close() {
        inflater.end();
    }
}
