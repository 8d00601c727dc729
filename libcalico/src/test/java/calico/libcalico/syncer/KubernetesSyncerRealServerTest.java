package calico.libcalico.syncer;

import calico.libcalico.datastore.kubernetes.KubernetesConfig;
import calico.libcalico.datastore.kubernetes.KubernetesDatastore;
import calico.libcalico.testing.KubeControlPlaneExtension;
import calico.libcalico.testing.TcpProxy;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link KubernetesSyncerContract} against the real kube-apiserver with Calico's CRDs and its
 * controllers (a namespace deletion finishes). The datastore reaches the server through a
 * {@link TcpProxy}, which cuts its streams and holds their resumes while a test changes things
 * and compacts etcd; the watch cache is off, so the resumes meet the compaction (410).
 */
class KubernetesSyncerRealServerTest extends KubernetesSyncerContract {

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withApiServerFlags("--watch-cache=false");

    private TcpProxy proxy;
    private KubernetesDatastore direct;

    @Override
    protected KubernetesDatastore newDatastore() {
        KUBE.deleteCalicoResources();
        var url = KUBE.controlPlane().apiServerUrl();
        proxy = new TcpProxy(new InetSocketAddress(url.getHost(), url.getPort()));
        return new KubernetesDatastore(KubernetesConfig.of(new ConfigBuilder(KUBE.config())
                .withMasterUrl("https://127.0.0.1:" + proxy.port()).build()).withBookmarkInterval(Duration.ofMillis(200)));
    }

    /** Not through the proxy: it writes while the proxy holds {@link #store}'s connections. */
    @Override
    protected KubernetesDatastore writer() {
        if (direct == null) {
            direct = KUBE.datastore();
        }
        return direct;
    }

    @Override
    protected KubernetesClient kubernetes() {
        return KUBE.client();
    }

    @Override
    protected void whileWatchesAreDownAndCompacted(Runnable changes) {
        proxy.cutAndHoldWhile(() -> {
            changes.run();
            KUBE.controlPlane().compactEtcd();
        });
    }

    @AfterEach
    void closeProxy() {
        if (direct != null) {
            direct.close();
        }
        store.close();
        proxy.close();
    }
}
