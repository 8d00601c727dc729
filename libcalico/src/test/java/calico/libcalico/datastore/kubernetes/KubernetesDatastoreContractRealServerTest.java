package calico.libcalico.datastore.kubernetes;

import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreContractTest;
import calico.libcalico.testing.KubeControlPlaneExtension;
import java.time.Duration;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The datastore contract against the kubernetes backend on the real kube-apiserver with
 * Calico's CRDs: the same cases etcd, memory and the mock API server pass. One control plane
 * for the class; each case starts with no Calico custom resource, and the namespaces a case
 * writes into exist (as in a cluster, where a namespaced object needs its namespace).
 *
 * <p>The watch cache is off, so that {@link #compactHistory} (an etcd compaction) reaches
 * watches at once: with the cache on, a watch from a compacted revision is served from the
 * cache's own history (kept at least 75 s), and no compaction can be made visible on demand.
 */
class KubernetesDatastoreContractRealServerTest extends DatastoreContractTest {

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutControllers()
            .withApiServerFlags("--watch-cache=false");

    @Override
    protected Datastore newDatastore() {
        KUBE.deleteCalicoResources();
        return new NamespacesOnDemand(new KubernetesDatastore(KubernetesConfig.of(KUBE.config())
                .withBookmarkInterval(Duration.ofMillis(200))), KUBE.client());
    }

    @Override
    protected long compactHistory(Datastore store) {
        return KUBE.controlPlane().compactEtcd();
    }

    @Override
    protected boolean watchKnowsValuesWrittenBeforeItStarted() {
        return false;
    }
}
