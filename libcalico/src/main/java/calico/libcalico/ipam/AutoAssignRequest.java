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
 * @param namespaceLabels the labels of the workload's Kubernetes namespace, matched against each pool's
 *                    {@code namespaceSelector}; null when there is no namespace (then only pools whose
 *                    {@code namespaceSelector} is empty or {@code all()} are used)
 */
public record AutoAssignRequest(String handleId, String hostname, int num4, int num6, List<Cidr> ipv4Pools,
                                List<Cidr> ipv6Pools, Map<String, String> attributes, IntendedUse intendedUse,
                                Map<String, String> namespaceLabels) {

    public AutoAssignRequest {
        ipv4Pools = ipv4Pools == null ? List.of() : List.copyOf(ipv4Pools);
        ipv6Pools = ipv6Pools == null ? List.of() : List.copyOf(ipv6Pools);
        attributes = attributes == null ? Map.of() : Map.copyOf(attributes);
        intendedUse = intendedUse == null ? IntendedUse.WORKLOAD : intendedUse;
        namespaceLabels = namespaceLabels == null ? null : Map.copyOf(namespaceLabels);
    }

    /** A request for a workload outside any namespace (or whose namespace does not matter). */
    public AutoAssignRequest(String handleId, String hostname, int num4, int num6, List<Cidr> ipv4Pools,
                             List<Cidr> ipv6Pools, Map<String, String> attributes, IntendedUse intendedUse) {
        this(handleId, hostname, num4, num6, ipv4Pools, ipv6Pools, attributes, intendedUse, null);
    }

    /** {@return a request for one IPv4 workload address from any pool} */
    public static AutoAssignRequest ipv4(String handleId, String hostname) {
        return new AutoAssignRequest(handleId, hostname, 1, 0, List.of(), List.of(), Map.of(), IntendedUse.WORKLOAD);
    }
}
