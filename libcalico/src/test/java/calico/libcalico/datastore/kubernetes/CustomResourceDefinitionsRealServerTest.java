package calico.libcalico.datastore.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.codec.ResourceCodec;
import calico.api.crd.CustomResourceDefinitions;
import calico.api.model.CalicoNodeStatus;
import calico.api.model.CalicoNodeStatusSpec;
import calico.api.model.CalicoNodeStatusStatus;
import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.Datastore;
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
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The generated CRDs (charts/calico/crds) in a real kube-apiserver: calico-api's rich example of
 * each stored kind (every field of spec and status set) is accepted as a custom resource and
 * comes back unchanged, so the structural schemas neither refuse nor prune anything the codec
 * writes; and a kind with a status subresource keeps spec and status writes apart through the
 * datastore.
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
        if (kind.statusSubresource()) {
            // A create drops the status of such a kind; it is written through the subresource.
            ObjectNode withStatus = sent.deepCopy();
            ((ObjectNode) withStatus.get("metadata")).put("resourceVersion", created.getMetadata().getResourceVersion());
            scoped.resource(JSON.treeToValue(withStatus, GenericKubernetesResource.class)).subresource("status").update();
        }
        JsonNode stored = JSON.valueToTree(scoped.withName(created.getMetadata().getName()).get());

        for (String field : new String[] {"spec", "status"}) {
            // Compared as parsed text: a Long written and an int read back are the same JSON number.
            assertThat(JSON.readTree(stored.path(field).toString())).as(kind.kind() + "." + field)
                    .isEqualTo(JSON.readTree(sent.path(field).toString()));
        }
        Resource back = codec.fromCustomResource(kind, stored);
        assertThat(ResourceCodec.get().toTree(back).path("spec")).isEqualTo(ResourceCodec.get().toTree(example).path("spec"));
    }

    /** CalicoNodeStatus: a status write keeps the stored spec, a spec write keeps the stored status. */
    @Test
    void updateStatusWritesTheStatusAloneAndUpdateTheSpecAlone() {
        try (Datastore store = KUBE.datastore()) {
            ObjectMeta meta = ObjectMeta.named("status-apart");
            CalicoNodeStatus created = (CalicoNodeStatus) store.create(new CalicoNodeStatus(meta,
                    new CalicoNodeStatusSpec("node-1", List.of("BGP"), 10)));
            CalicoNodeStatusStatus reported = new CalicoNodeStatusStatus("2026-12-06T04:30:00Z", null,
                    new CalicoNodeStatusStatus.Bgp(1, 0, 0, 0, List.of(new CalicoNodeStatusStatus.Peer("10.0.0.2",
                            "NodeMesh", "Established", "04:29:59")), List.of()), null);
            // The caller's copy of the spec is stale: the status write must not bring it back.
            CalicoNodeStatus afterStatus = (CalicoNodeStatus) store.updateStatus(new CalicoNodeStatus(created.metadata(),
                    new CalicoNodeStatusSpec("node-1", List.of("Agent"), 99), reported));
            assertThat(afterStatus.spec()).isEqualTo(created.spec());
            assertThat(afterStatus.status()).isEqualTo(reported);

            CalicoNodeStatus afterSpec = (CalicoNodeStatus) store.update(new CalicoNodeStatus(afterStatus.metadata(),
                    new CalicoNodeStatusSpec("node-1", List.of("Routes"), 5), null));
            assertThat(afterSpec.spec().classes()).containsExactly("Routes");
            assertThat(afterSpec.status()).as("a spec update leaves the reported status").isEqualTo(reported);
            assertThat(((CalicoNodeStatus) store.get(afterSpec.key()).orElseThrow()).status()).isEqualTo(reported);
            store.delete(afterSpec.key(), null);
        }
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
