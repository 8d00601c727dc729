package calico.typha.server;

import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.etcd.EtcdConfig;
import calico.libcalico.datastore.etcd.EtcdDatastore;
import calico.libcalico.testing.EtcdServerExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link TyphaServerContract} over a real etcd. */
class TyphaServerTest extends TyphaServerContract {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    @Override
    protected Datastore newDatastore() {
        ETCD.ensureRunning();
        return new EtcdDatastore(EtcdConfig.of(ETCD.endpoint()));
    }
}
