package calico.api.k8s.policy;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * One entry of a Kubernetes rule's {@code from}/{@code to}: pods (in this or selected
 * namespaces) or an IP block. {@code null} selectors mean "field absent", which differs from
 * an empty selector: an absent namespaceSelector means the policy's own namespace.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record NetworkPolicyPeer(LabelSelector podSelector, LabelSelector namespaceSelector,
                                @JsonProperty("ipBlock") IPBlock ipBlock) {

    public static NetworkPolicyPeer pods(LabelSelector podSelector) {
        return new NetworkPolicyPeer(podSelector, null, null);
    }

    public static NetworkPolicyPeer namespaces(LabelSelector namespaceSelector) {
        return new NetworkPolicyPeer(null, namespaceSelector, null);
    }

    public static NetworkPolicyPeer block(String cidr, String... except) {
        return new NetworkPolicyPeer(null, null, new IPBlock(cidr, List.of(except)));
    }

    /** A CIDR with optional exceptions inside it. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record IPBlock(String cidr, List<String> except) {
        public IPBlock {
            except = except == null ? List.of() : List.copyOf(except);
        }
    }
}
