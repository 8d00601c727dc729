package calico.felix.dataplane.nft;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * What a read-back records of a chain it verified: 128 bits of a SHA-256 over the listing's JSON, walked
 * with object fields in name order (so it is equal exactly when the listings are equal as JSON, numbers by
 * value). The listing itself is not kept: at the policy scale (5,000 chains, 70,000 rules) the trees held
 * ~200 MiB of heap; the digests hold under 1 MiB, and a chain that differs differs in its digest.
 */
record ListedDigest(long high, long low) {

    /** {@return the digest of {@code listing}} (a chain's rules as {@link NftListing} holds them) */
    static ListedDigest of(JsonNode listing) {
        MessageDigest sha;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
        feed(sha, listing);
        ByteBuffer b = ByteBuffer.wrap(sha.digest());
        return new ListedDigest(b.getLong(), b.getLong());
    }

    private static void feed(MessageDigest sha, JsonNode n) {
        switch (n.getNodeType()) {
            case OBJECT -> {
                List<String> names = new ArrayList<>(n.size());
                for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
                    names.add(it.next());
                }
                names.sort(null);
                tag(sha, 'o', names.size());
                for (String name : names) {
                    text(sha, name);
                    feed(sha, n.get(name));
                }
            }
            case ARRAY -> {
                tag(sha, 'a', n.size());
                for (JsonNode e : n) {
                    feed(sha, e);
                }
            }
            case STRING -> {
                tag(sha, 's', 0);
                text(sha, n.textValue());
            }
            case NUMBER -> {
                tag(sha, 'n', 0);
                text(sha, n.numberValue().toString());
            }
            case BOOLEAN -> tag(sha, 'b', n.booleanValue() ? 1 : 0);
            case NULL, MISSING -> tag(sha, 'z', 0);
            case BINARY, POJO -> throw new IllegalArgumentException("not in a libnftables listing: " + n.getNodeType());
        }
    }

    private static void tag(MessageDigest sha, char kind, int size) {
        sha.update((byte) kind);
        sha.update(ByteBuffer.allocate(4).putInt(size).array());
    }

    private static void text(MessageDigest sha, String s) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        sha.update(ByteBuffer.allocate(4).putInt(bytes.length).array());
        sha.update(bytes);
    }
}
