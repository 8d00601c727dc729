package calico.node.startup.app;

import calico.node.startup.autodetect.KubernetesNodes;
import io.fabric8.kubernetes.api.model.NodeAddress;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Kubernetes Nodes read through fabric8 with the service's kubeconfig, as calico-node reads its
 * Kubernetes Node when {@code KUBECONFIG} (or an in-cluster account) is there. Without one, there is
 * no cluster to ask. A missing Node is an error naming it.
 */
final class FabricKubernetesNodes implements KubernetesNodes {

    private final Supplier<Optional<Config>> config;

    FabricKubernetesNodes(Supplier<Optional<Config>> config) {
        this.config = config;
    }

    @Override
    public Optional<List<String>> internalIps(String name) {
        Optional<Config> c = config.get();
        if (c.isEmpty()) {
            return Optional.empty();
        }
        try (KubernetesClient client = quickClient(c.get())) {
            io.fabric8.kubernetes.api.model.Node node = client.nodes().withName(name).get();
            if (node == null) {
                throw new IllegalStateException("kubernetes-internal-ip: the Kubernetes Node " + name + " does not exist");
            }
            List<NodeAddress> addresses = node.getStatus() == null || node.getStatus().getAddresses() == null
                    ? List.of() : node.getStatus().getAddresses();
            return Optional.of(addresses.stream().filter(a -> "InternalIP".equals(a.getType()))
                    .map(NodeAddress::getAddress).toList());
        }
    }

    /**
     * A client for start-up's few reads: two HTTP retries instead of fabric8's ten (~19 s each
     * against an unreachable API server), as the CNI plugin's.
     */
    static KubernetesClient quickClient(Config config) {
        return new KubernetesClientBuilder().withConfig(new ConfigBuilder(config).withRequestRetryBackoffLimit(2).build())
                .build();
    }
}
