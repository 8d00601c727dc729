package calico.libcalico.testing;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.ResourceKind;
import calico.controlplane.ControlPlane;
import calico.libcalico.datastore.kubernetes.KubernetesDatastore;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The fixture itself: a real API server the kubernetes datastore reads through fabric8. */
class KubeControlPlaneExtensionTest {

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutCrds().withoutControllers();

    @Test
    void theDatastoreReadsNamespacesAsProfilesFromTheRealApiServer(KubernetesClient client, ControlPlane cp) {
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName("fixture-ns")
                .addToLabels("team", "blue").endMetadata().build()).create();
        try (KubernetesDatastore store = KUBE.datastore()) {
            var profiles = store.list(ResourceKind.PROFILE, null, null);
            assertThat(profiles.items()).extracting(r -> r.metadata().name())
                    .contains("kns.default", "kns.kube-system", "kns.fixture-ns");
            assertThat(profiles.revision()).isPositive();
        }
        assertThat(cp.kubectl("get", "namespace", "fixture-ns", "-o", "jsonpath={.metadata.labels.team}")).isEqualTo("blue");
    }
}
