package calico.api.k8s.policy;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * One peer of an admin policy rule: exactly one of {@code namespaces}, {@code pods},
 * {@code nodes} (egress only) or {@code networks} (egress only, CIDRs).
 */
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record AdminNetworkPolicyPeer(LabelSelector namespaces, NamespacedPod pods, LabelSelector nodes,
                                     List<String> networks) {

    public AdminNetworkPolicyPeer {
        networks = networks == null ? List.of() : List.copyOf(networks);
    }

    /** Pods chosen by a namespace selector and a pod selector (either empty = every one). */
    @JsonIgnoreProperties(ignoreUnknown = true)
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record NamespacedPod(LabelSelector namespaceSelector, LabelSelector podSelector) {
    }
}
