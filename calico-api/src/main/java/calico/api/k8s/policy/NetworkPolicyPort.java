package calico.api.k8s.policy;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * One entry of a Kubernetes rule's {@code ports}. {@code protocol} defaults to TCP when absent;
 * {@code port} is a number or a named container port; {@code endPort} turns a numeric port
 * into the range {@code port..endPort}.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record NetworkPolicyPort(String protocol, IntOrString port, Integer endPort) {

    public static NetworkPolicyPort tcp(int port) {
        return new NetworkPolicyPort("TCP", IntOrString.of(port), null);
    }
}
