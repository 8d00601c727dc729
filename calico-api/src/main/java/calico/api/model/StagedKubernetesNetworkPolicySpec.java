package calico.api.model;

import calico.api.k8s.policy.LabelSelector;
import calico.api.k8s.policy.NetworkPolicyEgressRule;
import calico.api.k8s.policy.NetworkPolicyIngressRule;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * Spec of a {@link StagedKubernetesNetworkPolicy}: a Kubernetes NetworkPolicy spec (same field
 * names and meaning as {@code networking.k8s.io/v1}) plus the {@code stagedAction} it previews.
 * Converted to a {@link StagedNetworkPolicy} named {@code knp.default.<name>} by
 * {@link calico.api.k8s.KubernetesConverter#stagedNetworkPolicy}.
 */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record StagedKubernetesNetworkPolicySpec(
        StagedAction stagedAction,
        LabelSelector podSelector,
        List<NetworkPolicyIngressRule> ingress,
        List<NetworkPolicyEgressRule> egress,
        List<PolicyType> policyTypes) {

    public StagedKubernetesNetworkPolicySpec {
        ingress = ingress == null ? List.of() : List.copyOf(ingress);
        egress = egress == null ? List.of() : List.copyOf(egress);
        policyTypes = policyTypes == null ? List.of() : List.copyOf(policyTypes);
    }
}
