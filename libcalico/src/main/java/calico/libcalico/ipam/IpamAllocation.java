package calico.libcalico.ipam;

import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import java.util.Map;

/**
 * One allocated address, as its block records it: the block, the handle that holds it (null for an address
 * allocated without one) and the allocation's attributes (the CNI plugin's {@code namespace}, {@code pod},
 * {@code node}; a tunnel address's {@code type} and {@code node}).
 */
public record IpamAllocation(IpAddress ip, Cidr block, String blockNode, String handleId, Map<String, String> attributes) {
    public IpamAllocation {
        attributes = attributes == null ? Map.of() : Map.copyOf(attributes);
    }
}
