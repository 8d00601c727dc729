package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * Spec of a {@link HostEndpoint}: one interface of a host ({@code interfaceName}, or
 * {@code "*"} for all of the host's traffic), or the interface that holds one of
 * {@code expectedIPs}. {@code expectedIPs} also stand for the endpoint when selectors are
 * turned into IP sets.
 */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record HostEndpointSpec(
        String node,
        String interfaceName,
        @JsonProperty("expectedIPs") List<String> expectedIPs,
        List<String> profiles,
        List<EndpointPort> ports) {

    public HostEndpointSpec {
        expectedIPs = expectedIPs == null ? List.of() : List.copyOf(expectedIPs);
        profiles = profiles == null ? List.of() : List.copyOf(profiles);
        ports = ports == null ? List.of() : List.copyOf(ports);
    }

    /** A named port of the host, for named-port rules. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record EndpointPort(String name, Protocol protocol, Integer port) {
    }
}
