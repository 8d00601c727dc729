package calico.apiserver.datastore;

import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreContractTest;

/**
 * libcalico's datastore contract against {@code ApiServerDatastore} talking HTTPS (CA-verified,
 * bearer token) to a real apiserver-service on the memory datastore.
 */
class ApiServerDatastoreContractTest extends DatastoreContractTest {

    @Override
    protected Datastore newDatastore() {
        return SharedApiServer.get().newDatastore();
    }

    @Override
    protected long compactHistory(Datastore store) {
        var memory = SharedApiServer.get().serverStore();
        long revision = memory.currentRevision();
        memory.compact(revision);
        return revision;
    }

    /** The Kubernetes watch protocol carries no previous values: only those this watch delivered are known. */
    @Override
    protected boolean watchKnowsValuesWrittenBeforeItStarted() {
        return false;
    }
}
