package calico.felix.e2e;

import calico.libcalico.testing.EtcdServerExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The policy matrix on a real etcd, felix reading it directly; one subclass per backend. */
abstract class EtcdPolicyMatrix extends PolicyMatrix {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    EtcdPolicyMatrix(Backend backend) {
        super(backend, new TestDatastore.Etcd(ETCD), false);
    }
}
