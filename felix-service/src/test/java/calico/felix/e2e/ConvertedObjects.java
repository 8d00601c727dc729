package calico.felix.e2e;

import calico.api.k8s.KubeNamespace;
import calico.api.k8s.KubeNetworkPolicy;
import calico.api.k8s.KubePod;
import calico.api.k8s.KubeServiceAccount;
import calico.api.k8s.KubernetesConverter;
import calico.api.k8s.NetworkPolicyConverter;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.validation.PolicyNaming;
import calico.api.validation.ResourceValidator;
import calico.api.validation.ValidationOptions;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.etcd.EtcdConfig;
import calico.libcalico.datastore.etcd.EtcdDatastore;
import java.net.URI;
import java.time.Clock;

/**
 * The cluster's Kubernetes objects converted in-process by {@link KubernetesConverter}, exactly
 * as Calico's Kubernetes datastore would present them, and written into etcd: namespaces and
 * service accounts as {@code kns.}/{@code ksa.} Profiles, pods as WorkloadEndpoints,
 * NetworkPolicies as {@code knp.default.*} NetworkPolicies and admin policies as
 * {@code kanp.adminnetworkpolicy.*} / {@code kbanp.baselineadminnetworkpolicy.*} GlobalNetworkPolicies
 * (by a client allowed those names, as only the conversion is).
 */
final class ConvertedObjects implements ClusterObjects {

    private final KubernetesConverter converter = new KubernetesConverter();
    private final Datastore store;
    /** Writes as the Kubernetes conversion does: the only writer allowed {@code knp.default.} names. */
    private final Datastore kubeStore;

    private ConvertedObjects(Datastore store, Datastore kubeStore) {
        this.store = store;
        this.kubeStore = kubeStore;
    }

    /** {@return objects converted into the etcd at {@code endpoint}} (two clients, closed with this). */
    static ConvertedObjects onEtcd(URI endpoint) {
        return new ConvertedObjects(new EtcdDatastore(EtcdConfig.of(endpoint)), new EtcdDatastore(EtcdConfig.of(endpoint),
                ResourceValidator.with(new ValidationOptions(PolicyNaming.TIER_PREFIXED, true)), Clock.systemUTC()));
    }

    @Override
    public void namespace(KubeNamespace namespace) {
        Writes.upsert(store, converter.namespaceProfile(namespace));
    }

    @Override
    public void serviceAccount(KubeServiceAccount serviceAccount) {
        Writes.upsert(store, converter.serviceAccountProfile(serviceAccount));
    }

    @Override
    public void pod(KubePod pod) {
        Writes.upsert(store, converter.workloadEndpoint(pod).orElseThrow());
    }

    @Override
    public void deletePod(KubePod pod) {
        store.delete(converter.workloadEndpoint(pod).orElseThrow().key(), null);
    }

    @Override
    public void networkPolicy(String manifest, KubeNetworkPolicy parsed) {
        Writes.upsert(kubeStore, converter.networkPolicy(parsed).orElseThrow("NetworkPolicy " + parsed.metadata().name()));
    }

    @Override
    public void deleteNetworkPolicy(String namespace, String name) {
        kubeStore.delete(ResourceKey.of(ResourceKind.NETWORK_POLICY, namespace, NetworkPolicyConverter.NAME_PREFIX + name),
                null);
    }

    @Override
    public void adminPolicy(String manifest) {
        var objects = new calico.api.k8s.KubernetesObjects();
        Writes.upsert(kubeStore, manifest.contains("kind: BaselineAdminNetworkPolicy")
                ? converter.baselineAdminNetworkPolicy(objects.parse(manifest,
                        calico.api.k8s.KubeBaselineAdminNetworkPolicy.class)).orElseThrow("BaselineAdminNetworkPolicy")
                : converter.adminNetworkPolicy(objects.parse(manifest, calico.api.k8s.KubeAdminNetworkPolicy.class))
                        .orElseThrow("AdminNetworkPolicy"));
    }

    @Override
    public void deleteAdminPolicy(String kind, String name) {
        kubeStore.delete(ResourceKey.of(ResourceKind.GLOBAL_NETWORK_POLICY,
                kind.equals("BaselineAdminNetworkPolicy") ? calico.api.k8s.BaselineAdminNetworkPolicyConverter.policyName(name)
                        : calico.api.k8s.AdminNetworkPolicyConverter.policyName(name)), null);
    }

    @Override
    public void node(String name) {
        // calico-node's start-up creates the Calico Node on etcd (MultiNodeCluster writes it)
    }

    @Override
    public void deleteNode(String name) {
        store.delete(ResourceKey.of(ResourceKind.NODE, name), null);
    }

    @Override
    public void close() {
        store.close();
        kubeStore.close();
    }
}
