package calico.node.startup.steps;

import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.etcd.EtcdConfig;
import calico.libcalico.datastore.etcd.EtcdDatastore;
import calico.libcalico.testing.EtcdAdmin;
import calico.libcalico.testing.EtcdServerExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link NodeStartupContract} on a real etcd: start-up creates the Node itself. */
class EtcdNodeStartupTest extends NodeStartupContract {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    @Override
    protected Datastore newDatastore() {
        EtcdAdmin.wipe(ETCD.endpoint());
        return new EtcdDatastore(EtcdConfig.of(ETCD.endpoint()));
    }

    @Override
    protected void nodeExists(String name) {
        // etcd: start-up creates the Node.
    }

    @Override
    protected boolean kubernetes() {
        return false;
    }
}
