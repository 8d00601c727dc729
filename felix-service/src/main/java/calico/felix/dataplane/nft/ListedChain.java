package calico.felix.dataplane.nft;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * One chain's rules as a read-back listed them ({@code {"expr": [...], "comment": ...}} each), kept as JSON
 * text: a table's listing as trees held ~250 MiB at the policy scale, as text a sixth of it. The tree is
 * parsed only for a chain the verifier compares with the rules we sent; a recorded chain needs its
 * {@link #digest} alone.
 */
final class ListedChain {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private StringBuilder building = new StringBuilder("[");
    private String json;
    private int size;
    private ListedDigest digest;

    /** Appends a listed rule (while the listing is read). */
    void add(ObjectNode rule) {
        if (size > 0) {
            building.append(',');
        }
        building.append(rule);
        size++;
    }

    /** {@return how many rules the chain has} */
    int size() {
        return size;
    }

    /** {@return the rules, parsed} (a new tree each call) */
    ArrayNode rules() {
        try {
            return (ArrayNode) MAPPER.readTree(json());
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a listing we serialised does not parse", e);
        }
    }

    /** {@return the digest of {@link #rules}} */
    ListedDigest digest() {
        if (digest == null) {
            digest = ListedDigest.of(rules());
        }
        return digest;
    }

    private String json() {
        if (json == null) {
            json = building.append(']').toString();
            building = null;
        }
        return json;
    }
}
