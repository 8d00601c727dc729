package calico.api.k8s.policy;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/** A Kubernetes ingress rule. Empty {@code from} means every source; empty {@code ports}, every port. */
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record NetworkPolicyIngressRule(List<NetworkPolicyPort> ports, List<NetworkPolicyPeer> from) {
    public NetworkPolicyIngressRule {
        ports = ports == null ? List.of() : List.copyOf(ports);
        from = from == null ? List.of() : List.copyOf(from);
    }
}
