package calico.libcalico.syncer;

import calico.libcalico.datastore.kubernetes.KubernetesApiServer;
import calico.libcalico.datastore.kubernetes.KubernetesDatastore;
import io.fabric8.kubernetes.client.KubernetesClient;
import org.junit.jupiter.api.AfterEach;

/** {@link KubernetesSyncerContract} against the test API server (fabric8's CRUD mock with history). */
class KubernetesSyncerTest extends KubernetesSyncerContract {

    private KubernetesApiServer server;

    @Override
    protected KubernetesDatastore newDatastore() {
        server = new KubernetesApiServer();
        return server.datastore();
    }

    @Override
    protected KubernetesClient kubernetes() {
        return server.client();
    }

    /** Partitioned: the streams stay open but get nothing; then the history goes and the streams drop. */
    @Override
    protected void whileWatchesAreDownAndCompacted(Runnable changes) {
        server.partition(true);
        changes.run();
        server.compact();
        server.partition(false);
        server.dropWatches();
    }

    @AfterEach
    void stopServer() {
        store.close(); // before the server, so that its watches close cleanly
        server.close();
    }
}
