package calico.api.model;

import static calico.api.model.RoundTrip.CODEC;
import static calico.api.model.RoundTrip.assertAllLossless;
import static calico.api.model.RoundTrip.resource;
import static calico.api.model.RoundTrip.yamlTrees;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * One rich example per kind (src/test/resources/model/rich/&lt;Kind&gt;.yaml) that sets every
 * field of the kind's spec and status: it parses, round-trips through YAML and JSON without
 * loss, and does the same inside a {@code <Kind>List}.
 */
class RichExamplesTest {

    private static String example(ResourceKind kind) {
        return resource("model/rich/" + kind.kind() + ".yaml");
    }

    @ParameterizedTest
    @EnumSource(ResourceKind.class)
    void richExampleRoundTripsWithoutLoss(ResourceKind kind) {
        List<Resource> parsed = assertAllLossless(example(kind));
        assertThat(parsed).singleElement().extracting(Resource::resourceKind).isEqualTo(kind);
    }

    @ParameterizedTest
    @EnumSource(value = ResourceKind.class, names = "STAGED_KUBERNETES_NETWORK_POLICY", mode = EnumSource.Mode.EXCLUDE)
    void richExampleSetsEveryFieldOfSpecAndStatus(ResourceKind kind) {
        Resource r = CODEC.parse(example(kind));
        Set<String> missing = new TreeSet<>(FieldCoverage.allFields(kind.type()));
        missing.removeIf(f -> f.startsWith("ObjectMeta.") || f.startsWith("OwnerReference.")
                || f.startsWith("ManagedFieldsEntry."));
        missing.removeAll(FieldCoverage.setFields(r));
        assertThat(missing).as("fields of %s that the rich example leaves unset", kind.kind()).isEmpty();
    }

    @ParameterizedTest
    @EnumSource(ResourceKind.class)
    void listFormRoundTrips(ResourceKind kind) {
        JsonNode item = yamlTrees(example(kind)).get(0);
        ObjectNode second = item.deepCopy();
        ((ObjectNode) second.get("metadata")).put("name", "second");
        ObjectNode list = JsonNodeFactory.instance.objectNode();
        list.put("apiVersion", Resource.API_VERSION);
        list.put("kind", kind.listKind());
        list.putObject("metadata").put("resourceVersion", "42");
        list.putArray("items").add(item).add(second);

        List<Resource> items = CODEC.parseAll(list.toPrettyString());
        assertThat(items).hasSize(2);
        Resource first = CODEC.parse(example(kind));
        assertThat(items.get(0)).isEqualTo(first);
        assertThat(items.get(1)).isEqualTo(first.withMetadata(first.metadata().withName("second")));

        // Written back item by item, the list reads back the same.
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        out.put("apiVersion", Resource.API_VERSION);
        out.put("kind", kind.listKind());
        items.forEach(r -> out.withArray("items").add(CODEC.toTree(r)));
        assertThat(RoundTrip.jsonTree(out.get("items").toString())).isEqualTo(RoundTrip.jsonTree(list.get("items").toString()));
        assertThat(CODEC.parseAll(new String(out.toString().getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8)))
                .isEqualTo(items);
    }
}
