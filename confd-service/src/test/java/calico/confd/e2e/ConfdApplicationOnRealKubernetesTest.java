package calico.confd.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.Node;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.testing.KubeControlPlaneExtension;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import java.util.Map;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link ConfdApplicationContract} over the kubernetes datastore on a real kube-apiserver with
 * Calico's CRDs ({@code DATASTORE_TYPE=kubernetes}, {@code KUBECONFIG}): the BGP syncer reads
 * Calico's custom resources and the Kubernetes Nodes, whose BGP addresses are Calico's
 * annotations on them (a Node is the Kubernetes Node: created there, then updated through the
 * datastore as calico-node does).
 */
class ConfdApplicationOnRealKubernetesTest extends ConfdApplicationContract {

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutControllers();

    @Override
    protected Map<String, String> datastoreVariables() {
        return Map.of("DATASTORE_TYPE", "kubernetes", "KUBECONFIG", KUBE.kubeconfig().toString());
    }

    @Override
    protected Node storeNode(Datastore ds, Node node) {
        KUBE.client().nodes().resource(new NodeBuilder().withNewMetadata().withName(node.metadata().name())
                .endMetadata().build()).create();
        Node stored = (Node) ds.update(node);
        assertThat(KUBE.client().nodes().withName(node.metadata().name()).get().getMetadata().getAnnotations())
                .containsEntry("projectcalico.org/IPv4Address", node.spec().bgp().ipv4Address());
        assertThat(ds.get(ResourceKey.of(ResourceKind.NODE, node.metadata().name()))).contains(stored);
        return stored;
    }

    @Override
    protected void checkDatastoreMetrics(String prometheus) {
        assertThat(prometheus).contains("calico_datastore_invalid_objects_total{application=\"confd\",kind=\"BGPPeer\"} 0.0");
    }
}
