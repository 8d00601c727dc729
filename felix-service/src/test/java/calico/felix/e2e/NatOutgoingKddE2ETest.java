package calico.felix.e2e;

import calico.libcalico.testing.KubeControlPlaneExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link NatOutgoingE2ETest}'s scenario on the kubernetes datastore: the IPPools and the
 * FelixConfiguration are custom resources in a real kube-apiserver, the pods real Pods.
 */
class NatOutgoingKddE2ETest {

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutControllers();

    @Test
    void nftables() throws Exception {
        NatOutgoingE2ETest.run(Backend.NFTABLES, new TestDatastore.Kubernetes(KUBE));
    }
}
