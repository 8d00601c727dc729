package calico.api.k8s;

import calico.api.k8s.policy.AdminNetworkPolicyPeer.NamespacedPod;
import calico.api.k8s.policy.AdminNetworkPolicyRule;
import calico.api.k8s.policy.LabelSelector;
import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/** A {@code policy.networking.k8s.io/v1alpha1} AdminNetworkPolicy (cluster-scoped), as the conversion reads it. */
@JsonIgnoreProperties(ignoreUnknown = true)
public record KubeAdminNetworkPolicy(KubeObjectMeta metadata, Spec spec) {

    public static final String API_VERSION = "policy.networking.k8s.io/v1alpha1";
    public static final String KIND = "AdminNetworkPolicy";

    /** {@code priority} 0-1000, lower first. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record Spec(Integer priority, Subject subject, List<AdminNetworkPolicyRule> ingress,
                       List<AdminNetworkPolicyRule> egress) {
        public Spec {
            ingress = ingress == null ? List.of() : List.copyOf(ingress);
            egress = egress == null ? List.of() : List.copyOf(egress);
        }
    }

    /** The pods a policy applies to: exactly one of {@code namespaces} or {@code pods}. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Subject(LabelSelector namespaces, NamespacedPod pods) {
    }
}
