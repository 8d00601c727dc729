package calico.felix.calc;

import calico.api.k8s.StagedKubernetesPolicyConverter;
import calico.api.model.Resource;
import calico.api.model.ResourceKind;
import calico.api.model.StagedAction;
import calico.api.model.StagedGlobalNetworkPolicy;
import calico.api.model.StagedKubernetesNetworkPolicy;
import calico.api.model.StagedNetworkPolicy;
import java.util.List;

/**
 * A staged policy with {@code stagedAction: Delete}: it previews removing the enforced policy of
 * the same name (a StagedKubernetesNetworkPolicy {@code n}: the NetworkPolicy {@code knp.default.n}).
 * It has no selector or rules of its own: while the target exists, the staged delete selects the
 * target's endpoints in the target's place ({@link #view}), compiles to no rules, and names the
 * target ({@link CompiledPolicy#deletes()}) so that the pending trace skips both.
 * Other actions ({@code Set}, and {@code Learn}/{@code Ignore}, which Calico's felix also
 * evaluates as the policy they carry) are not staged deletes.
 *
 * @param staged the staged policy's own ID (what flow logs would name)
 * @param target the enforced policy it would delete
 */
record StagedDelete(PolicyId staged, PolicyId target) {

    /** {@return the staged delete {@code r} is}, or {@code null} when {@code r} is not one */
    static StagedDelete of(Resource r) {
        if (r instanceof StagedGlobalNetworkPolicy p && p.spec().stagedAction() == StagedAction.Delete) {
            return of(p.spec().tier(), null, p.metadata().name(), p.metadata().name(),
                    ResourceKind.STAGED_GLOBAL_NETWORK_POLICY, ResourceKind.GLOBAL_NETWORK_POLICY);
        } else if (r instanceof StagedNetworkPolicy p && p.spec().stagedAction() == StagedAction.Delete) {
            return of(p.spec().tier(), p.metadata().namespace(), p.metadata().name(), p.metadata().name(),
                    ResourceKind.STAGED_NETWORK_POLICY, ResourceKind.NETWORK_POLICY);
        } else if (r instanceof StagedKubernetesNetworkPolicy p
                && StagedKubernetesPolicyConverter.stagedAction(p) == StagedAction.Delete) {
            return of(null, p.metadata().namespace(), p.metadata().name(),
                    StagedKubernetesPolicyConverter.stagedPolicyName(p.metadata().name()),
                    ResourceKind.STAGED_KUBERNETES_NETWORK_POLICY, ResourceKind.NETWORK_POLICY);
        }
        return null;
    }

    private static StagedDelete of(String tier, String ns, String name, String targetName, ResourceKind kind,
                                   ResourceKind targetKind) {
        String t = tier == null || tier.isBlank() ? PolicyView.DEFAULT_TIER : tier;
        return new StagedDelete(new PolicyId(t, ns, name, kind), new PolicyId(t, ns, targetName, targetKind));
    }

    /** {@return the staged delete in the target's place}: its selector, order and directions, no rules */
    PolicyView view(PolicyView target) {
        return new PolicyView(staged, target.order(), target.selector(), target.ingress(), target.egress(),
                List.of(), List.of(), target.namespace(), target.hostKind());
    }
}
