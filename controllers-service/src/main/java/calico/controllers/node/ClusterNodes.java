package calico.controllers.node;

import calico.api.model.Node;
import calico.api.model.NodeSpec;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * One read of the nodes: the Kubernetes Nodes (name → labels) and the Calico Nodes. On the
 * Kubernetes datastore a Calico Node is the Kubernetes Node; on etcd a Calico Node names its
 * Kubernetes Node in an {@code orchRefs} entry with orchestrator {@code k8s}.
 *
 * @param kubernetes the Kubernetes Nodes' labels by name
 * @param calico     the Calico Nodes by name
 */
public record ClusterNodes(Map<String, Map<String, String>> kubernetes, Map<String, Node> calico) {

    public ClusterNodes {
        kubernetes = Map.copyOf(kubernetes);
        calico = Map.copyOf(calico);
    }

    public static ClusterNodes of(Map<String, Map<String, String>> kubernetes, List<Node> calico) {
        return new ClusterNodes(kubernetes, calico.stream().collect(Collectors.toMap(n -> n.metadata().name(),
                Function.identity())));
    }

    /** {@return the Kubernetes Node a Calico Node stands for}, empty when it is not a Kubernetes node. */
    public static Optional<String> kubernetesName(Node node) {
        List<NodeSpec.OrchRef> refs = node.spec() == null ? List.of() : node.spec().orchRefs();
        return refs.stream().filter(r -> "k8s".equals(r.orchestrator()) && r.nodeName() != null)
                .map(NodeSpec.OrchRef::nodeName).findFirst();
    }

    /**
     * {@return whether the node named {@code calicoName} (as IPAM attributes name it) is still in the
     * cluster}: its Kubernetes Node exists, or it is a Calico Node of no Kubernetes node (not ours to judge).
     */
    public boolean live(String calicoName) {
        Node n = calico.get(calicoName);
        if (n == null) {
            return kubernetes.containsKey(calicoName);
        }
        return kubernetesName(n).map(kubernetes::containsKey).orElse(true);
    }

    public Set<String> kubernetesNames() {
        return kubernetes.keySet();
    }
}
