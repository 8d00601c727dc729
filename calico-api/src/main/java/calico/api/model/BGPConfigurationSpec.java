package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * Spec of a {@link BGPConfiguration}: {@code default} holds the cluster-wide settings,
 * {@code node.<name>} the per-node overrides. Durations are Go duration strings ("120s").
 */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record BGPConfigurationSpec(
        String logSeverityScreen,
        Boolean nodeToNodeMeshEnabled,
        ASNumber asNumber,
        @JsonProperty("serviceLoadBalancerIPs") List<CidrBlock> serviceLoadBalancerIPs,
        @JsonProperty("serviceExternalIPs") List<CidrBlock> serviceExternalIPs,
        @JsonProperty("serviceClusterIPs") List<CidrBlock> serviceClusterIPs,
        List<Community> communities,
        List<PrefixAdvertisement> prefixAdvertisements,
        Integer listenPort,
        BGPPassword nodeMeshPassword,
        String nodeMeshMaxRestartTime,
        BindMode bindMode,
        List<String> ignoredInterfaces,
        @JsonProperty("localWorkloadPeeringIPV4") String localWorkloadPeeringIPV4,
        @JsonProperty("localWorkloadPeeringIPV6") String localWorkloadPeeringIPV6,
        String serviceLoadBalancerAggregation) {

    public BGPConfigurationSpec {
        serviceLoadBalancerIPs = copy(serviceLoadBalancerIPs);
        serviceExternalIPs = copy(serviceExternalIPs);
        serviceClusterIPs = copy(serviceClusterIPs);
        communities = copy(communities);
        prefixAdvertisements = copy(prefixAdvertisements);
        ignoredInterfaces = copy(ignoredInterfaces);
    }

    private static <T> List<T> copy(List<T> l) {
        return l == null ? List.of() : List.copyOf(l);
    }

    /** A CIDR whose service addresses are advertised. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record CidrBlock(String cidr) {
    }

    /** A named BGP community value, {@code aa:nn} (standard) or {@code aa:nn:mm} (large). */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Community(String name, String value) {
    }

    /** Communities to attach when advertising {@code cidr}: names from {@code communities} or literal values. */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record PrefixAdvertisement(String cidr, List<String> communities) {
        public PrefixAdvertisement {
            communities = communities == null ? List.of() : List.copyOf(communities);
        }
    }

    /** Whether BIRD listens on every address or only on the node's own IP. */
    public enum BindMode {
        None, NodeIP
    }
}
