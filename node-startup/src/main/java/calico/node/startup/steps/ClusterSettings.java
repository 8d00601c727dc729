package calico.node.startup.steps;

/**
 * The cluster-wide defaults start-up makes sure of.
 *
 * @param calicoVersion       written into ClusterInformation {@code calicoVersion}
 * @param clusterType         {@code CLUSTER_TYPE}, merged into ClusterInformation's ({@code ,kdd} is added on
 *                            the kubernetes datastore, as Calico does)
 * @param kubernetesDatastore the datastore is Kubernetes: Nodes exist before start-up (the kubelet's), and no
 *                            per-node FelixConfiguration is written (Calico's KDD has none)
 */
public record ClusterSettings(String calicoVersion, String clusterType, boolean kubernetesDatastore) {
}
