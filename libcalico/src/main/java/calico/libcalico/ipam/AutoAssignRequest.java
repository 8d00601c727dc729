package calico.libcalico.ipam;

import calico.api.net.Cidr;
import java.util.List;
import java.util.Map;

/**
 * A request for {@code num4} IPv4 and {@code num6} IPv6 addresses for one owner.
 *
 * @param handleId    the owner's handle (Calico's CNI uses {@code k8s-pod-network.<container ID>});
 *                    releasing by it frees every address of the request
 * @param hostname    the node asking: blocks affine to it are used first, and new blocks are claimed for it
 * @param ipv4Pools   pools to use (their CIDRs), or empty for every enabled pool that fits the node and the use
 * @param ipv6Pools   the same for IPv6
 * @param attributes  stored with the allocation (Calico's CNI writes namespace, node, pod, timestamp)
 * @param intendedUse what the addresses are for ({@code allowedUses} of the pool); null means workload
 */
public record AutoAssignRequest(String handleId, String hostname, int num4, int num6, List<Cidr> ipv4Pools,
                                List<Cidr> ipv6Pools, Map<String, String> attributes, IntendedUse intendedUse) {

    public AutoAssignRequest {
        ipv4Pools = ipv4Pools == null ? List.of() : List.copyOf(ipv4Pools);
        ipv6Pools = ipv6Pools == null ? List.of() : List.copyOf(ipv6Pools);
        attributes = attributes == null ? Map.of() : Map.copyOf(attributes);
        intendedUse = intendedUse == null ? IntendedUse.WORKLOAD : intendedUse;
    }

    /** {@return a request for one IPv4 workload address from any pool} */
    public static AutoAssignRequest ipv4(String handleId, String hostname) {
        return new AutoAssignRequest(handleId, hostname, 1, 0, List.of(), List.of(), Map.of(), IntendedUse.WORKLOAD);
    }
}
