package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * What a {@link KubernetesEndpointSlice} says about its service: whose endpoints these are, their
 * addresses and the ports they serve.
 *
 * @param serviceName the slice's {@code kubernetes.io/service-name} label: the Service (in the
 *                    slice's namespace) it belongs to; empty for a slice of no service
 * @param endpoints   {@code endpoints[]}: each endpoint's addresses
 * @param ports       {@code ports[]}
 */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record KubernetesEndpointSliceSpec(String serviceName, List<Endpoint> endpoints, List<EndpointPort> ports) {

    /** The label Kubernetes puts on every EndpointSlice of a Service. */
    public static final String SERVICE_NAME_LABEL = "kubernetes.io/service-name";

    public KubernetesEndpointSliceSpec {
        serviceName = serviceName == null ? "" : serviceName;
        endpoints = endpoints == null ? List.of() : List.copyOf(endpoints);
        ports = ports == null ? List.of() : List.copyOf(ports);
    }

    /** One {@code endpoints[]} entry: its {@code addresses} (IPv4 or IPv6, by the slice's address type). */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record Endpoint(List<String> addresses) {

        public Endpoint {
            addresses = addresses == null ? List.of() : List.copyOf(addresses);
        }
    }

    /**
     * One {@code ports[]} entry.
     *
     * @param name     the port's name (the Service port's); empty when unnamed
     * @param protocol {@code TCP} (Kubernetes' default), {@code UDP} or {@code SCTP}
     * @param port     the port the endpoints serve; {@code null} means "all ports" in Kubernetes,
     *                 which Calico reads as no port at all
     */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record EndpointPort(String name, String protocol, Integer port) {

        public EndpointPort {
            name = name == null ? "" : name;
            protocol = protocol == null || protocol.isEmpty() ? "TCP" : protocol;
        }
    }
}
