package calico.felix.e2e;

import calico.libcalico.testing.KubeControlPlaneExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Routes between nodes on the kubernetes datastore: a real kube-apiserver with Calico's CRDs; the
 * nodes are Kubernetes Nodes carrying Calico's fields in their {@code projectcalico.org/*}
 * annotations, the IPAM blocks and the pool custom resources, the pods real Pods.
 */
class KddMultiNodeRoutesTest extends MultiNodeRoutes {

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutControllers();

    KddMultiNodeRoutesTest() {
        super(new TestDatastore.Kubernetes(KUBE));
    }
}
