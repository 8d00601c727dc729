package calico.libcalico.datastore.etcd;

import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreContractTest;
import calico.libcalico.testing.EtcdAdmin;
import calico.libcalico.testing.EtcdServerExtension;
import java.time.Duration;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The datastore contract against a real etcd. */
class EtcdDatastoreContractTest extends DatastoreContractTest {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    @Override
    protected Datastore newDatastore() {
        EtcdAdmin.wipe(ETCD.endpoint());
        return new EtcdDatastore(EtcdConfig.of(ETCD.endpoint()).withProgressInterval(Duration.ofMillis(200)));
    }

    @Override
    protected long compactHistory(Datastore store) {
        return ETCD.compact();
    }
}
