package calico.felix.e2e;

import calico.libcalico.testing.KubeControlPlaneExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The policy matrix on the kubernetes datastore: a real kube-apiserver (no controller manager:
 * the cluster makes every object it uses) with Calico's CRDs; namespaces, service accounts, pods
 * and Kubernetes NetworkPolicies are real API objects, Calico's resources custom resources.
 */
abstract class KddPolicyMatrix extends PolicyMatrix {

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutControllers();

    KddPolicyMatrix(Backend backend, boolean throughTypha) {
        this(backend, throughTypha, false);
    }

    /** @param twoNodes the pods spread over two nodes with VXLAN between them ({@link PodHosts#twoNodesVxlan}) */
    KddPolicyMatrix(Backend backend, boolean throughTypha, boolean twoNodes) {
        super(backend, new TestDatastore.Kubernetes(KUBE), throughTypha, twoNodes);
    }
}
