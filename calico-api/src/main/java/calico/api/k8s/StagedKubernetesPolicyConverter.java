package calico.api.k8s;

import calico.api.model.NetworkPolicy;
import calico.api.model.NetworkPolicySpec;
import calico.api.model.ObjectMeta;
import calico.api.model.StagedAction;
import calico.api.model.StagedKubernetesNetworkPolicy;
import calico.api.model.StagedKubernetesNetworkPolicySpec;
import calico.api.model.StagedNetworkPolicy;
import calico.api.model.StagedNetworkPolicySpec;

/**
 * Converts a StagedKubernetesNetworkPolicy into the StagedNetworkPolicy
 * {@code knp.default.<name>} that previews it, as Calico does: the Kubernetes spec is
 * converted exactly like an enforced Kubernetes NetworkPolicy ({@link NetworkPolicyConverter})
 * and the {@code stagedAction} is carried over. The UID and resourceVersion of the staged
 * object are not carried (they belong to the staged object, not to the policy it previews).
 */
public final class StagedKubernetesPolicyConverter {

    private final NetworkPolicyConverter policies;

    public StagedKubernetesPolicyConverter(NetworkPolicyConverter policies) {
        this.policies = policies;
    }

    /** {@return the StagedNetworkPolicy name for a StagedKubernetesNetworkPolicy name}. */
    public static String stagedPolicyName(String stagedKubernetesName) {
        return NetworkPolicyConverter.policyName(stagedKubernetesName);
    }

    /** {@return the policy that committing the staged object would enforce}, named {@code knp.default.<name>}. */
    public Conversion<NetworkPolicy> enforced(StagedKubernetesNetworkPolicy staged) {
        ObjectMeta m = staged.metadata();
        String what = "StagedKubernetesNetworkPolicy " + (m == null ? "<no metadata>" : m.namespace() + "/" + m.name());
        KubeObjectMeta km = m == null ? null
                : new KubeObjectMeta(m.name(), m.namespace(), null, null, null, m.creationTimestamp(), null, null, null);
        NetworkPolicyConverter.requireNamed(what, km);
        StagedKubernetesNetworkPolicySpec s = staged.spec() == null
                ? new StagedKubernetesNetworkPolicySpec(null, null, null, null, null) : staged.spec();
        Conversion<NetworkPolicySpec> spec = policies.convertSpec(what, s.podSelector(), s.ingress(), s.egress(),
                s.policyTypes());
        ObjectMeta meta = new ObjectMeta(stagedPolicyName(m.name()), m.namespace(), null, null, null, null,
                m.creationTimestamp(), null, null, null, null, null);
        return new Conversion<>(new NetworkPolicy(meta, spec.value()), spec.droppedRules());
    }

    /** {@return the stagedAction}, {@code Set} when not given (Calico's default). */
    public static StagedAction stagedAction(StagedKubernetesNetworkPolicy staged) {
        return staged.spec() == null || staged.spec().stagedAction() == null
                ? StagedAction.Set : staged.spec().stagedAction();
    }

    public Conversion<StagedNetworkPolicy> convert(StagedKubernetesNetworkPolicy staged) {
        Conversion<NetworkPolicy> enforced = enforced(staged);
        StagedNetworkPolicySpec spec = StagedNetworkPolicySpec.of(stagedAction(staged), enforced.value().spec());
        return new Conversion<>(new StagedNetworkPolicy(enforced.value().metadata(), spec), enforced.droppedRules());
    }
}
