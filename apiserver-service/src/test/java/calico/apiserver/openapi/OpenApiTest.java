package calico.apiserver.openapi;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The descriptions in the OpenAPI documents: every policy field has one, placed where kubectl reads it. */
class OpenApiTest {

    static final String P = "org.projectcalico.api.v3.";
    static final OpenApi API = new OpenApi();

    /** The definitions whose every property must be described (what `kubectl explain` on a policy walks). */
    static final List<String> FULLY_DESCRIBED = List.of("GlobalNetworkPolicy", "GlobalNetworkPolicySpec",
            "NetworkPolicy", "NetworkPolicySpec", "StagedGlobalNetworkPolicySpec", "StagedNetworkPolicySpec",
            "Rule", "EntityRule", "Rule.IcmpFields", "Rule.HttpMatch", "Rule.HttpPath", "EntityRule.ServiceAccountMatch",
            "EntityRule.ServiceMatch", "TierSpec", "GlobalNetworkSetSpec", "IPPoolSpec", "HostEndpointSpec");

    @Test
    void everyPolicyFieldIsDescribedInBothDocuments() {
        for (JsonNode defs : List.of(API.v3().path("components").path("schemas"), API.v2().path("definitions"))) {
            List<String> missing = new ArrayList<>();
            for (String d : FULLY_DESCRIBED) {
                JsonNode def = defs.path(P + d);
                assertThat(def.isObject()).as(d).isTrue();
                for (Map.Entry<String, JsonNode> p : def.path("properties").properties()) {
                    if (p.getValue().path("description").asText("").isEmpty()) {
                        missing.add(d + "." + p.getKey());
                    }
                }
            }
            assertThat(missing).as("properties without a description").isEmpty();
        }
    }

    @Test
    void describedReferencesAreWrappedInAllOfInV3AndSiblingsInV2() {
        JsonNode v3 = API.v3().path("components").path("schemas").path(P + "Rule").path("properties").path("source");
        assertThat(v3.has("$ref")).isFalse();
        assertThat(v3.path("allOf").get(0).path("$ref").asText()).isEqualTo("#/components/schemas/" + P + "EntityRule");
        assertThat(v3.path("description").asText()).startsWith("Criteria the sender");
        JsonNode v2 = API.v2().path("definitions").path(P + "Rule").path("properties").path("source");
        assertThat(v2.path("$ref").asText()).isEqualTo("#/definitions/" + P + "EntityRule");
        assertThat(v2.path("description").asText()).startsWith("Criteria the sender");
        JsonNode action = API.v3().path("components").path("schemas").path(P + "Rule").path("properties").path("action");
        assertThat(action.path("enum").toString()).contains("Allow").contains("Pass");
        assertThat(action.path("description").asText()).contains("Pass (skip the rest of this tier");
        assertThat(API.v3().path("components").path("schemas").path(P + "GlobalNetworkPolicy").path("description").asText())
                .startsWith("A cluster-wide set of ordered allow/deny rules");
    }

    @Test
    void v2HasNoNullableKeywordWhichKubeApiserverCouldNotTurnIntoProtobuf() {
        JsonNode v3Items = API.v3().path("components").path("schemas").path(P + "IPAMBlockSpec").path("properties")
                .path("allocations").path("items");
        assertThat(v3Items.path("nullable").asBoolean()).as("v3 keeps it").isTrue();
        assertThat(v3Items.path("type").asText()).isEqualTo("integer");
        JsonNode v2Items = API.v2().path("definitions").path(P + "IPAMBlockSpec").path("properties")
                .path("allocations").path("items");
        assertThat(v2Items.has("nullable")).isFalse();
        assertThat(v2Items.has("type")).as("untyped, as kube's v2 conversion of a nullable CRD schema").isFalse();
        assertThat(API.v2().toString()).doesNotContain("\"nullable\"");
    }
}
