package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/** Spec of a {@link WorkloadEndpoint}: one interface of one workload (e.g. a pod's eth0). */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record WorkloadEndpointSpec(
        String orchestrator,
        String workload,
        String node,
        @JsonProperty("containerID") String containerID,
        String pod,
        String endpoint,
        String serviceAccountName,
        List<String> ipNetworks,
        @JsonProperty("ipNATs") List<IpNat> ipNATs,
        @JsonProperty("ipv4Gateway") String ipv4Gateway,
        @JsonProperty("ipv6Gateway") String ipv6Gateway,
        List<String> profiles,
        String interfaceName,
        String mac,
        List<EndpointPort> ports,
        List<String> allowSpoofedSourcePrefixes) {

    public WorkloadEndpointSpec {
        ipNetworks = ipNetworks == null ? List.of() : List.copyOf(ipNetworks);
        ipNATs = ipNATs == null ? List.of() : List.copyOf(ipNATs);
        profiles = profiles == null ? List.of() : List.copyOf(profiles);
        ports = ports == null ? List.of() : List.copyOf(ports);
        allowSpoofedSourcePrefixes = allowSpoofedSourcePrefixes == null ? List.of() : List.copyOf(allowSpoofedSourcePrefixes);
    }

    /** A 1:1 NAT mapping of an internal workload IP to an external one. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record IpNat(@JsonProperty("internalIP") String internalIP, @JsonProperty("externalIP") String externalIP) {
    }

    /** A named port of a workload, for named-port rules; hostPort/hostIP for host-port mapping. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record EndpointPort(String name, Protocol protocol, Integer port, Integer hostPort,
                               @JsonProperty("hostIP") String hostIP) {
    }
}
