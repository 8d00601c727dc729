package calico.api.k8s;

import calico.api.k8s.policy.LabelSelector;
import calico.api.k8s.policy.NetworkPolicyEgressRule;
import calico.api.k8s.policy.NetworkPolicyIngressRule;
import calico.api.model.PolicyType;
import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/** A {@code networking.k8s.io/v1} NetworkPolicy, reduced to what the conversion reads. */
@JsonIgnoreProperties(ignoreUnknown = true)
public record KubeNetworkPolicy(KubeObjectMeta metadata, Spec spec) {

    public static final String API_VERSION = "networking.k8s.io/v1";
    public static final String KIND = "NetworkPolicy";

    /**
     * The policy spec. {@code policyTypes} empty means "not given" (an object the API server has
     * not defaulted); the converter then applies Kubernetes' defaulting.
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record Spec(LabelSelector podSelector,
                       List<NetworkPolicyIngressRule> ingress,
                       List<NetworkPolicyEgressRule> egress,
                       List<PolicyType> policyTypes) {
        public Spec {
            ingress = ingress == null ? List.of() : List.copyOf(ingress);
            egress = egress == null ? List.of() : List.copyOf(egress);
            policyTypes = policyTypes == null ? List.of() : List.copyOf(policyTypes);
        }
    }
}
