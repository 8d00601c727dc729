package calico.api.schema;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.GlobalNetworkPolicy;
import calico.api.model.IPAMBlockSpec;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

class ModelSchemasTest {

    private final ModelSchemas schemas = new ModelSchemas();

    @Test
    void aPropertyWithItsOwnEntryBeatsTheSharedOne() {
        assertThat(schemas.description("EntityRule", "selector")).startsWith("The endpoint (or network set) must match");
        assertThat(schemas.description("GlobalNetworkPolicySpec", "selector")).startsWith("A Calico selector expression");
        assertThat(schemas.description("GlobalNetworkPolicySpec", "noSuchField")).isNull();
    }

    @Test
    void recordsAreHandedToTheCallerByDefinitionName() {
        List<String> used = new ArrayList<>();
        ModelSchemas.Records refs = new ModelSchemas.Records() {
            @Override
            public JsonNode use(String name, Supplier<ObjectNode> body) {
                used.add(name);
                return JsonNodeFactory.instance.objectNode().put("$ref", name);
            }

            @Override
            public JsonNode describe(JsonNode schema, String description) {
                return schema;
            }
        };
        ObjectNode policy = schemas.record(GlobalNetworkPolicy.class, refs);
        assertThat(policy.path("description").asText()).startsWith("A cluster-wide set of ordered allow/deny rules");
        assertThat(policy.path("properties").path("spec").path("$ref").asText())
                .isEqualTo("org.projectcalico.api.v3.GlobalNetworkPolicySpec");
        assertThat(used).containsExactly("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
                "org.projectcalico.api.v3.GlobalNetworkPolicySpec");
        // Lists of integers, as an IPAM block's allocations.
        ObjectNode block = schemas.record(IPAMBlockSpec.class, refs);
        assertThat(block.path("properties").path("allocations").path("type").asText()).isEqualTo("array");
        assertThat(block.path("properties").path("allocations").path("items").path("type").asText()).isEqualTo("integer");
    }
}
