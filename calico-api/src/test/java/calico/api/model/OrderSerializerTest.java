package calico.api.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Policy and tier {@code order} is written without a spurious fraction, and reads back equal. */
class OrderSerializerTest {

    private static String specJson(String kind, String order) {
        String doc = "apiVersion: projectcalico.org/v3\nkind: " + kind + "\nmetadata: {name: p, namespace: n}\nspec: {order: " + order + "}\n";
        Resource r = RoundTrip.CODEC.parse(doc);
        String json = RoundTrip.CODEC.toJson(r);
        assertThat(RoundTrip.CODEC.parse(json)).isEqualTo(r);
        assertThat(RoundTrip.CODEC.parse(RoundTrip.CODEC.toYaml(r))).isEqualTo(r);
        return RoundTrip.jsonTree(json).get("spec").get("order").toString();
    }

    @Test
    void everyOrderFieldWritesIntegralValuesAsIntegers() {
        for (String kind : List.of("GlobalNetworkPolicy", "NetworkPolicy", "StagedGlobalNetworkPolicy",
                "StagedNetworkPolicy", "Tier")) {
            assertThat(specJson(kind, "100")).as(kind).isEqualTo("100");
            assertThat(specJson(kind, "100.0")).as(kind).isEqualTo("100");
            assertThat(specJson(kind, "100.25")).as(kind).isEqualTo("100.25");
            assertThat(specJson(kind, "-5")).as(kind).isEqualTo("-5");
        }
    }

    @Test
    void largeAndTinyValuesKeepTheirMagnitude() {
        assertThat(specJson("Tier", "1000000")).isEqualTo("1000000");
        assertThat(specJson("Tier", "0.001")).isEqualTo("0.001");
        assertThat(specJson("Tier", "1.0e20")).isEqualTo("1.0E20");
    }
}
