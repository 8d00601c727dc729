package calico.libcalico.ipam;

import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.etcd.EtcdConfig;
import calico.libcalico.datastore.etcd.EtcdDatastore;
import calico.libcalico.testing.EtcdAdmin;
import calico.libcalico.testing.EtcdServerExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The IPAM contract on a real etcd. */
class EtcdIpamClientTest extends IpamClientContractTest {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    @Override
    protected Datastore newDatastore() {
        EtcdAdmin.wipe(ETCD.endpoint());
        return new EtcdDatastore(EtcdConfig.of(ETCD.endpoint()));
    }
}
