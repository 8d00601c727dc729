package calico.node.startup.steps;

import java.util.Map;
import java.util.Optional;

/**
 * kubeadm's cluster configuration, where start-up finds the pod network's CIDRs when the pool
 * variables leave them unset (the {@code kube-system/kubeadm-config} ConfigMap, as calico-node reads it).
 */
@FunctionalInterface
public interface KubeadmConfig {

    /** No Kubernetes cluster, or one not made by kubeadm. */
    KubeadmConfig NONE = Optional::empty;

    /** {@return the ConfigMap's data}, empty when there is no such ConfigMap or no cluster to ask */
    Optional<Map<String, String>> data();
}
