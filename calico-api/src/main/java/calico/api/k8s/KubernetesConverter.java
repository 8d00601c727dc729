package calico.api.k8s;

import calico.api.model.GlobalNetworkPolicy;
import calico.api.model.NetworkPolicy;
import calico.api.model.Profile;
import calico.api.model.StagedKubernetesNetworkPolicy;
import calico.api.model.StagedNetworkPolicy;
import calico.api.model.WorkloadEndpoint;
import java.util.Optional;

/**
 * The one entry point for turning Kubernetes objects into the Calico resources that Calico's
 * Kubernetes datastore presents for them. Stateless and thread-safe.
 *
 * <table>
 *   <caption>What each Kubernetes object becomes</caption>
 *   <tr><th>Kubernetes</th><th>Calico</th></tr>
 *   <tr><td>NetworkPolicy {@code ns/n}</td><td>NetworkPolicy {@code ns/knp.default.n}</td></tr>
 *   <tr><td>AdminNetworkPolicy {@code n}</td><td>GlobalNetworkPolicy {@code kanp.adminnetworkpolicy.n} (tier kube-admin)</td></tr>
 *   <tr><td>BaselineAdminNetworkPolicy {@code n}</td><td>GlobalNetworkPolicy {@code kbanp.baselineadminnetworkpolicy.n} (tier kube-baseline)</td></tr>
 *   <tr><td>StagedKubernetesNetworkPolicy {@code ns/n}</td><td>StagedNetworkPolicy {@code ns/knp.default.n}</td></tr>
 *   <tr><td>Namespace {@code ns}</td><td>Profile {@code kns.ns}</td></tr>
 *   <tr><td>ServiceAccount {@code ns/sa}</td><td>Profile {@code ksa.ns.sa}</td></tr>
 *   <tr><td>Pod {@code ns/p} on node {@code nd}</td><td>WorkloadEndpoint {@code ns/nd-k8s-p-eth0} (dashes doubled)</td></tr>
 * </table>
 */
public final class KubernetesConverter {

    private final NetworkPolicyConverter policies;
    private final AdminNetworkPolicyConverter adminPolicies = new AdminNetworkPolicyConverter();
    private final BaselineAdminNetworkPolicyConverter baselinePolicies = new BaselineAdminNetworkPolicyConverter();
    private final StagedKubernetesPolicyConverter stagedPolicies;
    private final ProfileConverter profiles;
    private final PodConverter pods;

    /** @param interfacePrefix Felix's first interface prefix, used for endpoint interface names */
    public KubernetesConverter(String interfacePrefix) {
        this.policies = new NetworkPolicyConverter();
        this.stagedPolicies = new StagedKubernetesPolicyConverter(policies);
        this.profiles = new ProfileConverter();
        this.pods = new PodConverter(interfacePrefix);
    }

    public KubernetesConverter() {
        this(WorkloadEndpointNames.DEFAULT_INTERFACE_PREFIX);
    }

    public Conversion<NetworkPolicy> networkPolicy(KubeNetworkPolicy np) {
        return policies.convert(np);
    }

    public Conversion<GlobalNetworkPolicy> adminNetworkPolicy(KubeAdminNetworkPolicy anp) {
        return adminPolicies.convert(anp);
    }

    public Conversion<GlobalNetworkPolicy> baselineAdminNetworkPolicy(KubeBaselineAdminNetworkPolicy banp) {
        return baselinePolicies.convert(banp);
    }

    public Conversion<StagedNetworkPolicy> stagedNetworkPolicy(StagedKubernetesNetworkPolicy staged) {
        return stagedPolicies.convert(staged);
    }

    public Profile namespaceProfile(KubeNamespace ns) {
        return profiles.namespace(ns);
    }

    public Profile serviceAccountProfile(KubeServiceAccount sa) {
        return profiles.serviceAccount(sa);
    }

    /** {@return the pod's endpoint}, or empty for pods Calico does not network ({@link PodConverter}). */
    public Optional<WorkloadEndpoint> workloadEndpoint(KubePod pod) {
        return pods.convert(pod);
    }
}
