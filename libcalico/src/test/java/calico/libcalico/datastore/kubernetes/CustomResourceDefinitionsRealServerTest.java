package calico.libcalico.datastore.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.codec.ResourceCodec;
import calico.api.crd.CustomResourceDefinitions;
import calico.api.model.Resource;
import calico.api.model.ResourceKind;
import calico.libcalico.testing.KubeControlPlaneExtension;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The generated CRDs (charts/calico/crds) in a real kube-apiserver: calico-api's rich example of
 * each stored kind (every field of spec and status set) is accepted as a custom resource and
 * comes back unchanged, so the structural schemas neither refuse nor prune anything the codec
 * writes.
 */
class CustomResourceDefinitionsRealServerTest {

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutControllers();

    private static final ObjectMapper JSON = ResourceCodec.get().jsonMapper();

    static Set<ResourceKind> storedKinds() {
        return EnumSet.copyOf(CustomResourceDefinitions.kinds());
    }

    @ParameterizedTest
    @MethodSource("storedKinds")
    void theRichExampleComesBackUnpruned(ResourceKind kind) throws IOException {
        Resource example = ResourceCodec.get().parse(richExample(kind));
        KubernetesClient client = KUBE.client();
        String namespace = example.metadata().namespace();
        if (namespace != null && client.namespaces().withName(namespace).get() == null) {
            client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build())
                    .create();
        }
        CrdCodec codec = new CrdCodec();
        ObjectNode sent = codec.toCustomResource(example, null);
        ((ObjectNode) sent.get("metadata")).remove("resourceVersion"); // the example's; a create carries none
        var resources = client.genericKubernetesResources(CrdCodec.context(kind));
        var scoped = namespace == null ? resources : resources.inNamespace(namespace);
        GenericKubernetesResource created = scoped.resource(JSON.treeToValue(sent, GenericKubernetesResource.class)).create();
        JsonNode stored = JSON.valueToTree(scoped.withName(created.getMetadata().getName()).get());

        for (String field : new String[] {"spec", "status"}) {
            // Compared as parsed text: a Long written and an int read back are the same JSON number.
            assertThat(JSON.readTree(stored.path(field).toString())).as(kind.kind() + "." + field)
                    .isEqualTo(JSON.readTree(sent.path(field).toString()));
        }
        Resource back = codec.fromCustomResource(kind, stored);
        assertThat(ResourceCodec.get().toTree(back).path("spec")).isEqualTo(ResourceCodec.get().toTree(example).path("spec"));
    }

    @Test
    void theDatastoreStoresAsCustomResourcesExactlyTheKindsWithACrd() {
        KindSources sources = new KindSources();
        for (ResourceKind kind : ResourceKind.values()) {
            boolean crd = sources.sources(kind).stream().anyMatch(s -> CrdCodec.GROUP.equals(s.context().getGroup()));
            assertThat(crd).as(kind.kind()).isEqualTo(CustomResourceDefinitions.stored(kind));
        }
        // Calico's, plus the two upstream policy.networking.k8s.io ones the chart ships beside them.
        assertThat(KUBE.kubectl("get", "crd", "-o", "name").lines().filter(l -> l.endsWith(".crd.projectcalico.org")).count())
                .isEqualTo(CustomResourceDefinitions.kinds().size());
        assertThat(KUBE.kubectl("get", "crd", "-o", "name").lines().filter(l -> !l.endsWith(".crd.projectcalico.org")))
                .containsExactlyInAnyOrder("customresourcedefinition.apiextensions.k8s.io/adminnetworkpolicies.policy.networking.k8s.io",
                        "customresourcedefinition.apiextensions.k8s.io/baselineadminnetworkpolicies.policy.networking.k8s.io");
    }

    private static String richExample(ResourceKind kind) throws IOException {
        try (InputStream in = CustomResourceDefinitionsRealServerTest.class.getClassLoader()
                .getResourceAsStream("model/rich/" + kind.kind() + ".yaml")) {
            assertThat(in).as("calico-api's rich example of " + kind.kind()).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
