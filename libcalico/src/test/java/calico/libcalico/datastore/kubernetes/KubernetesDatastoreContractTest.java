package calico.libcalico.datastore.kubernetes;

import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreContractTest;
import org.junit.jupiter.api.AfterEach;

/**
 * The datastore contract against the kubernetes backend, over fabric8's mock API server in CRUD
 * mode (with history, see {@link RevisionedCrudDispatcher}): the same cases the etcd and memory
 * backends pass.
 */
class KubernetesDatastoreContractTest extends DatastoreContractTest {

    private KubernetesApiServer server;

    @Override
    protected Datastore newDatastore() {
        server = new KubernetesApiServer();
        return server.datastore();
    }

    @Override
    protected long compactHistory(Datastore store) {
        return server.compact();
    }

    @Override
    protected boolean watchKnowsValuesWrittenBeforeItStarted() {
        return false;
    }

    @AfterEach
    void stopServer() {
        if (server != null) {
            store.close(); // before the server, so that its watches close cleanly
            server.close();
        }
    }
}
