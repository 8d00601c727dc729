package calico.dataplane.nft;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigInteger;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link JsonText} prints what Jackson's {@code toString()} prints, for every node kind we send. */
class JsonTextTest {

    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    @Test
    void printsEveryNodeKindAsJacksonDoes() {
        ObjectNode n = JSON.objectNode();
        n.put("int", 131072).put("negative", -300).put("long", 1L << 40).put("short", (short) 7)
                .put("double", 1.5).put("big", new BigInteger("123456789012345678901234567890"))
                .put("true", true).put("false", false).putNull("null");
        n.putArray("array").add(1).add("two").addArray().add(JSON.objectNode());
        n.putObject("nested").putObject("match").put("op", "==").set("right", JSON.textNode("cali*"));
        n.putObject("empty");
        n.putArray("emptyArray");
        assertThat(JsonText.of(n)).isEqualTo(n.toString());
        JsonNode rule = NftExpr.match("==", NftExpr.meta("iifname"), JSON.textNode("cali1234"));
        assertThat(JsonText.of(rule)).isEqualTo(rule.toString());
    }

    @Test
    void escapesStringsAsJacksonDoes() {
        for (String s : List.of("", "plain", "quote \" and backslash \\", "slash / stays", "tab\tnewline\nreturn\r",
                "bell\u0007 nul\u0000 escape\u001b unit\u001f", "back\b form\f", "non-ASCII: é ü 名前 😀", "\u007f del")) {
            JsonNode t = JSON.textNode(s);
            assertThat(JsonText.of(t)).as(s).isEqualTo(t.toString());
            ObjectNode keyed = JSON.objectNode().put(s, s);
            assertThat(JsonText.of(keyed)).as(s).isEqualTo(keyed.toString());
        }
    }
}
