package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * The addresses and ports of a {@link KubernetesService}: what a client may dial to reach it.
 *
 * @param clusterIPs             {@code spec.clusterIPs} (or {@code spec.clusterIP}); empty for a headless service
 * @param externalIPs            {@code spec.externalIPs}
 * @param loadBalancerIngressIPs {@code status.loadBalancer.ingress[].ip}
 * @param ports                  {@code spec.ports}
 */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record KubernetesServiceSpec(
        @JsonProperty("clusterIPs") List<String> clusterIPs,
        @JsonProperty("externalIPs") List<String> externalIPs,
        @JsonProperty("loadBalancerIngressIPs") List<String> loadBalancerIngressIPs,
        List<ServicePort> ports) {

    public KubernetesServiceSpec {
        clusterIPs = clusterIPs == null ? List.of() : List.copyOf(clusterIPs);
        externalIPs = externalIPs == null ? List.of() : List.copyOf(externalIPs);
        loadBalancerIngressIPs = loadBalancerIngressIPs == null ? List.of() : List.copyOf(loadBalancerIngressIPs);
        ports = ports == null ? List.of() : List.copyOf(ports);
    }

    /**
     * One {@code spec.ports[]} entry.
     *
     * @param name     the port's name; empty when the service has a single unnamed port
     * @param protocol {@code TCP} (Kubernetes' default), {@code UDP} or {@code SCTP}
     * @param port     the port clients dial on the service's addresses
     * @param nodePort the port opened on every node, 0 when none
     */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record ServicePort(String name, String protocol, Integer port, Integer nodePort) {

        public ServicePort {
            name = name == null ? "" : name;
            protocol = protocol == null || protocol.isEmpty() ? "TCP" : protocol;
        }
    }
}
