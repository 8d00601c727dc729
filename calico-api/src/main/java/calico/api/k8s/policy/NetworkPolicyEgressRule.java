package calico.api.k8s.policy;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/** A Kubernetes egress rule. Empty {@code to} means every destination; empty {@code ports}, every port. */
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record NetworkPolicyEgressRule(List<NetworkPolicyPort> ports, List<NetworkPolicyPeer> to) {
    public NetworkPolicyEgressRule {
        ports = ports == null ? List.of() : List.copyOf(ports);
        to = to == null ? List.of() : List.copyOf(to);
    }
}
