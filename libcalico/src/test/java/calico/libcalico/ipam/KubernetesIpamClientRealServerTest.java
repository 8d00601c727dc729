package calico.libcalico.ipam;

import calico.libcalico.datastore.Datastore;
import calico.libcalico.testing.KubeControlPlaneExtension;
import io.fabric8.kubernetes.client.KubernetesClient;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The IPAM contract on the kubernetes datastore against the real kube-apiserver with Calico's
 * CRDs: every block, handle and affinity change a compare-and-swap on the resourceVersion the
 * API server checks. One control plane for the class; each case starts without Calico custom
 * resources and without Nodes.
 */
class KubernetesIpamClientRealServerTest extends KubernetesIpamClientTest {

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutControllers();

    @Override
    protected Datastore newDatastore() {
        KUBE.deleteCalicoResources();
        KUBE.client().nodes().delete();
        return KUBE.datastore();
    }

    @Override
    protected void closeBackend() {
        // the control plane outlives the case
    }

    @Override
    protected KubernetesClient kubernetes() {
        return KUBE.client();
    }
}
