package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * Spec of a {@link BGPPeer}: which nodes peer ({@code node} or {@code nodeSelector}, else
 * all) with what ({@code peerIP}+{@code asNumber}, {@code peerSelector} for other Calico
 * nodes, or {@code localWorkloadSelector} for local workloads), and session options.
 */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record BGPPeerSpec(
        String node,
        String nodeSelector,
        @JsonProperty("peerIP") String peerIP,
        ASNumber asNumber,
        @JsonProperty("localASNumber") ASNumber localASNumber,
        String peerSelector,
        String localWorkloadSelector,
        Boolean keepOriginalNextHop,
        NextHopMode nextHopMode,
        BGPPassword password,
        SourceAddress sourceAddress,
        String maxRestartTime,
        @JsonProperty("numAllowedLocalASNumbers") Integer numAllowedLocalASNumbers,
        @JsonProperty("ttlSecurity") Integer ttlSecurity,
        List<String> filters,
        String reachableBy) {

    public BGPPeerSpec {
        filters = filters == null ? List.of() : List.copyOf(filters);
    }

    /** Which source address BIRD uses for the session. */
    public enum SourceAddress {
        UseNodeIP, None
    }

    /** How the next hop of routes sent to the peer is set (replaces {@code keepOriginalNextHop}). */
    public enum NextHopMode {
        Auto, Self, Keep
    }
}
