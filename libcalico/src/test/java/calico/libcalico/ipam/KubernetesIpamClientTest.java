package calico.libcalico.ipam;

import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.kubernetes.KubernetesApiServer;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The IPAM contract on the kubernetes datastore (Calico's ipamblocks, blockaffinities,
 * ipamhandles and ipamconfigs custom resources) against the test API server, which enforces
 * resourceVersion preconditions as a real one does ({@link KubernetesIpamClientRealServerTest}
 * runs it on the real one).
 */
class KubernetesIpamClientTest extends IpamClientContractTest {

    private KubernetesApiServer server;

    @Override
    protected Datastore newDatastore() {
        server = new KubernetesApiServer();
        return server.datastore();
    }

    @Override
    protected void closeBackend() {
        server.close();
    }

    /** {@return the client that writes Kubernetes Nodes} into the API server the datastore reads. */
    protected KubernetesClient kubernetes() {
        return server.client();
    }

    /** Nodes are Kubernetes Nodes in this datastore. */
    @Override
    protected void node(String name, String labels) {
        Map<String, String> map = new LinkedHashMap<>();
        for (String kv : labels.replaceAll("[{}\\s]", "").split(",")) {
            String[] p = kv.split(":", 2);
            map.put(p[0], p[1]);
        }
        kubernetes().nodes().resource(new NodeBuilder().withNewMetadata().withName(name).withLabels(map).endMetadata()
                .build()).create();
    }
}
