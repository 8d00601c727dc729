package calico.api.k8s;

import calico.api.k8s.policy.AdminNetworkPolicyRule;
import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * A {@code policy.networking.k8s.io/v1alpha1} BaselineAdminNetworkPolicy: a cluster singleton
 * named {@code default} (the CRD refuses other names), without priority, actions Allow and Deny.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record KubeBaselineAdminNetworkPolicy(KubeObjectMeta metadata, Spec spec) {

    public static final String API_VERSION = KubeAdminNetworkPolicy.API_VERSION;
    public static final String KIND = "BaselineAdminNetworkPolicy";

    @JsonIgnoreProperties(ignoreUnknown = true)
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record Spec(KubeAdminNetworkPolicy.Subject subject, List<AdminNetworkPolicyRule> ingress,
                       List<AdminNetworkPolicyRule> egress) {
        public Spec {
            ingress = ingress == null ? List.of() : List.copyOf(ingress);
            egress = egress == null ? List.of() : List.copyOf(egress);
        }
    }
}
