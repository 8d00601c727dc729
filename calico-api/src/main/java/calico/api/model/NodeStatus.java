package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/** Status of a {@link Node}, reported by Calico: WireGuard public keys and the node's pod CIDRs. */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record NodeStatus(
        String wireguardPublicKey,
        @JsonProperty("wireguardPublicKeyV6") String wireguardPublicKeyV6,
        @JsonProperty("podCIDRs") List<String> podCIDRs) {

    public NodeStatus {
        podCIDRs = podCIDRs == null ? List.of() : List.copyOf(podCIDRs);
    }
}
