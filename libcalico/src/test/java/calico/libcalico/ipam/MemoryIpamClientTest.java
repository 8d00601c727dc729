package calico.libcalico.ipam;

import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.memory.MemoryDatastore;

/** The IPAM contract on the memory datastore. */
class MemoryIpamClientTest extends IpamClientContractTest {

    @Override
    protected Datastore newDatastore() {
        return new MemoryDatastore();
    }
}
