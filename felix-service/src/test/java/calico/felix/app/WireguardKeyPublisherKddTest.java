package calico.felix.app;

import static org.assertj.core.api.Assertions.assertThat;

import calico.libcalico.datastore.Datastore;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.KubeControlPlaneExtension;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * On the kubernetes datastore (a real kube-apiserver), felix's key lands where Calico keeps it:
 * the Kubernetes Node's {@code projectcalico.org/WireguardPublicKey} annotation, other
 * annotations kept; and it is removed when WireGuard is off.
 */
class WireguardKeyPublisherKddTest {

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutControllers();

    static final String ANNOTATION = "projectcalico.org/WireguardPublicKey";

    private static Map<String, String> annotations() {
        var n = KUBE.client().nodes().withName("kdd-node").get();
        return n.getMetadata().getAnnotations() == null ? Map.of() : n.getMetadata().getAnnotations();
    }

    @Test
    void theKeyIsTheNodesAnnotation() {
        KUBE.client().nodes().resource(new NodeBuilder().withNewMetadata().withName("kdd-node")
                .withAnnotations(Map.of("projectcalico.org/IPv4Address", "10.0.0.5/24", "other", "kept"))
                .endMetadata().build()).create();
        Datastore store = KUBE.datastore();
        try (WireguardKeyPublisher publisher = new WireguardKeyPublisher("kdd-node", () -> store)) {
            publisher.accept(WireguardKeyPublisherTest.KEY);
            Await.until("the annotation", Duration.ofSeconds(20),
                    () -> WireguardKeyPublisherTest.KEY.equals(annotations().get(ANNOTATION)));
            assertThat(annotations()).containsEntry("other", "kept").containsEntry("projectcalico.org/IPv4Address", "10.0.0.5/24");

            publisher.accept(null);
            Await.until("the annotation removed", Duration.ofSeconds(20), () -> !annotations().containsKey(ANNOTATION));
        }
    }
}
