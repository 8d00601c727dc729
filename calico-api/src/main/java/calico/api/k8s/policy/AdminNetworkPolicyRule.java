package calico.api.k8s.policy;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * One ingress or egress rule of an AdminNetworkPolicy or BaselineAdminNetworkPolicy
 * ({@code policy.networking.k8s.io/v1alpha1}); ingress rules list their peers in {@code from},
 * egress rules in {@code to}. {@code ports} empty means every port.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record AdminNetworkPolicyRule(String name, String action, List<AdminNetworkPolicyPeer> from,
                                     List<AdminNetworkPolicyPeer> to, List<AdminNetworkPolicyPort> ports) {

    public AdminNetworkPolicyRule {
        from = from == null ? List.of() : List.copyOf(from);
        to = to == null ? List.of() : List.copyOf(to);
        ports = ports == null ? List.of() : List.copyOf(ports);
    }
}
