package calico.libcalico.ipam;

import calico.api.net.IpAddress;
import java.util.Map;

/**
 * A request for one specific address (the CNI {@code ip} argument, or a pod's
 * {@code cni.projectcalico.org/ipAddrs} annotation). The address must be in an enabled pool;
 * IP reservations do not apply to it (as in Calico, they only steer automatic assignment).
 */
public record AssignIpRequest(String handleId, IpAddress ip, String hostname, Map<String, String> attributes) {
    public AssignIpRequest {
        attributes = attributes == null ? Map.of() : Map.copyOf(attributes);
    }
}
