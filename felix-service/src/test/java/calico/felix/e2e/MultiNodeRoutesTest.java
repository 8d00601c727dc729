package calico.felix.e2e;

import calico.libcalico.testing.EtcdServerExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Routes between nodes on a real etcd (the Kubernetes objects converted as Calico's Kubernetes datastore presents them). */
class MultiNodeRoutesTest extends MultiNodeRoutes {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    MultiNodeRoutesTest() {
        super(new TestDatastore.Etcd(ETCD));
    }
}
