package calico.api.k8s.policy;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;

/** One port of an admin policy rule: exactly one of a number, a container port name or a range. */
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record AdminNetworkPolicyPort(Number portNumber, String namedPort, Range portRange) {

    /** A protocol (TCP when absent) and one port. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Number(String protocol, Integer port) {
    }

    /** A protocol (TCP when absent) and the ports {@code start..end}, both included. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Range(String protocol, Integer start, Integer end) {
    }
}
