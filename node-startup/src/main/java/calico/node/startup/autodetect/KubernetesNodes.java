package calico.node.startup.autodetect;

import java.util.List;
import java.util.Optional;

/** The Kubernetes Nodes start-up can read ({@code kubernetes-internal-ip}). */
@FunctionalInterface
public interface KubernetesNodes {

    /** Not running on Kubernetes: no Node can be read. */
    KubernetesNodes NONE = name -> Optional.empty();

    /**
     * {@return the {@code InternalIP} addresses of the Kubernetes Node {@code name}}, in its status
     * order; empty when there is no Kubernetes cluster to ask.
     */
    Optional<List<String>> internalIps(String name);
}
