package calico.api.crd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.api.model.ResourceKind;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class CustomResourceDefinitionsTest {

    /** Where the chart keeps them; the tests run in calico-api/. */
    private static final Path CHART_CRDS = Path.of("..", "charts", "calico", "crds");

    private final CustomResourceDefinitions crds = new CustomResourceDefinitions();

    @Test
    void theChartsCrdsAreWhatTheModelGenerates() throws IOException {
        Map<String, String> generated = crds.files();
        TreeSet<String> inChart = new TreeSet<>();
        try (Stream<Path> files = Files.list(CHART_CRDS)) {
            // The chart also ships upstream CRDs (policy.networking.k8s.io_*): only Calico's are generated.
            files.map(f -> f.getFileName().toString()).filter(f -> f.startsWith("crd.projectcalico.org_"))
                    .forEach(inChart::add);
        }
        String regenerate = "; regenerate them from the repository root with: mvn -pl calico-api -q exec:java "
                + "-Dexec.mainClass=calico.api.crd.CustomResourceDefinitions -Dexec.args=charts/calico/crds";
        assertThat(inChart).as("CRD files in charts/calico/crds" + regenerate).isEqualTo(new TreeSet<>(generated.keySet()));
        for (Map.Entry<String, String> f : generated.entrySet()) {
            assertThat(Files.readString(CHART_CRDS.resolve(f.getKey()), StandardCharsets.UTF_8))
                    .as(f.getKey() + " differs from what the model generates" + regenerate).isEqualTo(f.getValue());
        }
    }

    @Test
    void everyKindTheDatastoreStoresHasOneWithCalicosNamesAndScope() {
        assertThat(CustomResourceDefinitions.kinds()).doesNotContain(ResourceKind.WORKLOAD_ENDPOINT, ResourceKind.PROFILE,
                ResourceKind.NODE, ResourceKind.KUBERNETES_SERVICE, ResourceKind.KUBERNETES_ENDPOINT_SLICE)
                .hasSize(ResourceKind.values().length - 5);
        ObjectNode ipamConfig = crds.definition(ResourceKind.IPAM_CONFIGURATION);
        assertThat(ipamConfig.at("/metadata/name").asText()).isEqualTo("ipamconfigs.crd.projectcalico.org");
        assertThat(ipamConfig.at("/spec/names/kind").asText()).isEqualTo("IPAMConfig");
        assertThat(ipamConfig.at("/spec/scope").asText()).isEqualTo("Cluster");
        ObjectNode policy = crds.definition(ResourceKind.NETWORK_POLICY);
        assertThat(policy.at("/spec/scope").asText()).isEqualTo("Namespaced");
        assertThat(policy.at("/spec/versions/0/name").asText()).isEqualTo("v1");
        assertThatThrownBy(() -> crds.definition(ResourceKind.PROFILE)).hasMessageContaining("Profile has no CRD");
    }

    @Test
    void everySchemaIsStructural() {
        for (ResourceKind k : CustomResourceDefinitions.kinds()) {
            JsonNode schema = crds.definition(k).at("/spec/versions/0/schema/openAPIV3Schema");
            List<String> problems = new ArrayList<>();
            structural(schema, k.kind(), problems);
            assertThat(problems).as(k.kind()).isEmpty();
            assertThat(schema.at("/properties/metadata")).hasToString("{\"type\":\"object\"}");
        }
    }

    /** The rules kube-apiserver checks: a type everywhere (or int-or-string / preserve-unknown), no $ref, no both properties and additionalProperties. */
    private static void structural(JsonNode s, String path, List<String> problems) {
        boolean typed = s.hasNonNull("type") || s.path("x-kubernetes-int-or-string").asBoolean()
                || s.path("x-kubernetes-preserve-unknown-fields").asBoolean();
        if (!typed) {
            problems.add(path + ": no type");
        }
        if (s.has("$ref") || s.has("allOf")) {
            problems.add(path + ": a reference");
        }
        if (s.has("properties") && s.has("additionalProperties")) {
            problems.add(path + ": properties and additionalProperties");
        }
        s.path("properties").fields().forEachRemaining(f -> structural(f.getValue(), path + "." + f.getKey(), problems));
        if (s.has("items")) {
            structural(s.get("items"), path + "[]", problems);
        }
        if (s.has("additionalProperties")) {
            structural(s.get("additionalProperties"), path + "{}", problems);
        }
    }
}
