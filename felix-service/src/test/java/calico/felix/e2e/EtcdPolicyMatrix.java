package calico.felix.e2e;

import calico.libcalico.testing.EtcdServerExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The policy matrix on a real etcd, felix reading it directly; one subclass per backend. */
abstract class EtcdPolicyMatrix extends PolicyMatrix {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    EtcdPolicyMatrix(Backend backend) {
        this(backend, false);
    }

    /** @param twoNodes the pods spread over two nodes with VXLAN between them ({@link PodHosts#twoNodesVxlan}) */
    EtcdPolicyMatrix(Backend backend, boolean twoNodes) {
        super(backend, new TestDatastore.Etcd(ETCD), false, twoNodes);
    }
}
