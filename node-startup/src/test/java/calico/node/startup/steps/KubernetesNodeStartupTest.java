package calico.node.startup.steps;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.libcalico.datastore.Datastore;
import calico.libcalico.testing.KubeControlPlaneExtension;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link NodeStartupContract} on a real kube-apiserver with Calico's CRDs: the Node is the
 * Kubernetes Node (its BGP addresses and tunnel addresses become Calico's annotations), which
 * start-up never creates.
 */
class KubernetesNodeStartupTest extends NodeStartupContract {

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutControllers();

    @Override
    protected Datastore newDatastore() {
        return KUBE.datastore();
    }

    @Override
    protected void nodeExists(String name) {
        KUBE.client().nodes().resource(new NodeBuilder().withNewMetadata().withName(name).endMetadata().build())
                .create();
    }

    @Override
    protected boolean kubernetes() {
        return true;
    }

    @AfterEach
    void clean() {
        KUBE.deleteCalicoResources();
        KUBE.client().nodes().delete();
    }

    @Test
    void aMissingKubernetesNodeStopsStartUp() {
        KUBE.client().nodes().withName(NODE).delete();
        assertThatThrownBy(() -> startup().run(defaults())).isInstanceOf(StartupException.class)
                .hasMessageContaining("Kubernetes Node " + NODE + " does not exist");
    }
}
