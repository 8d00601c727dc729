package calico.libcalico.datastore.memory;

import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreContractTest;
import java.time.Duration;

/** The datastore contract against the memory backend: the same cases the etcd backend passes. */
class MemoryDatastoreContractTest extends DatastoreContractTest {

    @Override
    protected Datastore newDatastore() {
        return new MemoryDatastore(MemoryDatastore.Settings.defaults().withBookmarkInterval(Duration.ofMillis(200)));
    }

    @Override
    protected long compactHistory(Datastore store) {
        MemoryDatastore memory = (MemoryDatastore) store;
        long revision = memory.currentRevision();
        memory.compact(revision);
        return revision;
    }
}
