package calico.felix.e2e;

import calico.api.k8s.KubeNamespace;
import calico.api.k8s.KubeNetworkPolicy;
import calico.api.k8s.KubePod;
import calico.api.k8s.KubeServiceAccount;

/**
 * Where the {@link Cluster}'s Kubernetes objects go: converted in-process into the Calico
 * resources Calico's Kubernetes datastore would present ({@link ConvertedObjects}, for an etcd
 * datastore), or written as real objects into a kube-apiserver, which the kubernetes datastore
 * then presents ({@link ApiServerObjects}). Each call creates the object or, if it exists,
 * changes it to match (labels; a pod's spec and address never change).
 */
sealed interface ClusterObjects extends AutoCloseable permits ConvertedObjects, ApiServerObjects {

    void namespace(KubeNamespace namespace);

    void serviceAccount(KubeServiceAccount serviceAccount);

    /** A pod as the CNI plugin leaves it: scheduled to {@link Cluster#NODE}, its address in {@code status.podIP}. */
    void pod(KubePod pod);

    /** Deletes a pod made by {@link #pod} (at once: there is no kubelet to wait for). */
    void deletePod(KubePod pod);

    /** A {@code networking.k8s.io/v1} NetworkPolicy: {@code manifest} is its YAML, {@code parsed} the same object. */
    void networkPolicy(String manifest, KubeNetworkPolicy parsed);

    void deleteNetworkPolicy(String namespace, String name);

    /**
     * An AdminNetworkPolicy or the BaselineAdminNetworkPolicy ({@code policy.networking.k8s.io/v1alpha1},
     * cluster-scoped): {@code manifest} is its YAML.
     */
    void adminPolicy(String manifest);

    /** Deletes the admin policy of {@code kind} (AdminNetworkPolicy or BaselineAdminNetworkPolicy) named {@code name}. */
    void deleteAdminPolicy(String kind, String name);

    /**
     * Registers node {@code name} as its kubelet would (a Kubernetes Node on the kubernetes
     * datastore, where the Calico Node is that object; nothing on etcd, where calico-node's start-up
     * creates the Calico Node).
     */
    void node(String name);

    /** Deletes node {@code name}: the Kubernetes Node on the kubernetes datastore, the Calico Node on etcd. */
    void deleteNode(String name);

    @Override
    void close();
}
