package calico.libcalico.ipam;

import calico.apiserver.datastore.SharedApiServer;
import calico.libcalico.datastore.Datastore;

/**
 * libcalico's IPAM contract through {@code ApiServerDatastore} and a real apiserver-service on the
 * memory datastore: the compare-and-swap loops over blocks, affinities and handles work unchanged
 * when every write is an HTTP PUT with a resourceVersion. (In libcalico's package: the contract
 * class is package-private.)
 */
class ApiServerIpamClientTest extends IpamClientContractTest {

    @Override
    protected Datastore newDatastore() {
        return SharedApiServer.get().newDatastore();
    }
}
