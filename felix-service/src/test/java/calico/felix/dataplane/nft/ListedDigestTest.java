package calico.felix.dataplane.nft;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import org.junit.jupiter.api.Test;

/** A recorded listing's digest is equal exactly when the listings are equal as JSON. */
class ListedDigestTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static ListedDigest digest(String json) throws Exception {
        return ListedDigest.of(JSON.readTree(json));
    }

    @Test
    void equalListingsHaveEqualDigestsWhateverTheirFieldOrder() throws Exception {
        String rule = "[{\"expr\":[{\"match\":{\"op\":\"==\",\"left\":{\"meta\":{\"key\":\"iifname\"}},\"right\":\"cali1\"}},"
                + "{\"counter\":{\"packets\":0,\"bytes\":0}},{\"accept\":null}],\"comment\":\"x\"}]";
        String reordered = "[{\"comment\":\"x\",\"expr\":[{\"match\":{\"right\":\"cali1\",\"left\":{\"meta\":{\"key\":\"iifname\"}},"
                + "\"op\":\"==\"}},{\"counter\":{\"bytes\":0,\"packets\":0}},{\"accept\":null}]}]";
        assertThat(digest(rule)).isEqualTo(digest(reordered));
        assertThat(ListedDigest.of(JsonNodeFactory.instance.arrayNode().add(5)))
                .as("numbers by value").isEqualTo(ListedDigest.of(JsonNodeFactory.instance.arrayNode().add(5L)));
    }

    @Test
    void anyDifferenceChangesTheDigest() throws Exception {
        String base = "[{\"expr\":[{\"match\":{\"op\":\"==\",\"left\":{\"meta\":{\"key\":\"iifname\"}},\"right\":\"cali1\"}},{\"accept\":null}]}]";
        ListedDigest d = digest(base);
        for (String other : new String[] {
                base.replace("cali1", "cali2"), // a value
                base.replace("accept", "drop"), // a verdict
                base.replace("\"op\":\"==\"", "\"op\":\"!=\""),
                base.replace(",{\"accept\":null}", ""), // a statement fewer
                "[" + base.substring(1, base.length() - 1) + "," + base.substring(1, base.length() - 1) + "]", // a rule more
                base.replace("{\"accept\":null}", "{\"accept\":\"null\"}"), // null vs text
                base.replace("\"key\":\"iifname\"", "\"key\":\"iifname\",\"x\":1")}) {
            assertThat(digest(other)).as(other).isNotEqualTo(d);
        }
        JsonNode a = JSON.readTree("[\"ab\",\"c\"]");
        JsonNode b = JSON.readTree("[\"a\",\"bc\"]");
        assertThat(ListedDigest.of(a)).as("strings are delimited").isNotEqualTo(ListedDigest.of(b));
    }
}
