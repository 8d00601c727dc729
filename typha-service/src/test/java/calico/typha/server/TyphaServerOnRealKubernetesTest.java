package calico.typha.server;

import calico.libcalico.datastore.Datastore;
import calico.libcalico.testing.KubeControlPlaneExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link TyphaServerContract} over the kubernetes datastore on a real kube-apiserver with
 * Calico's CRDs: typha serving felix clients (felix's syncer: Calico's custom resources plus the
 * Profiles, endpoints, Nodes and Services the cluster presents) exactly as from etcd. Without
 * kube-controller-manager, so that nothing but the cases changes what felix's syncer reads.
 */
class TyphaServerOnRealKubernetesTest extends TyphaServerContract {

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutControllers();

    @Override
    protected Datastore newDatastore() {
        return KUBE.datastore();
    }
}
