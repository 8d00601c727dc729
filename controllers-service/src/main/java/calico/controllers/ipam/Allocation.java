package calico.controllers.ipam;

import calico.api.model.IPAMBlock;
import calico.api.model.IPAMBlockSpec;
import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One allocated address of an IPAM block and what its attributes say of its owner.
 *
 * @param block      the block's CIDR
 * @param ip         the address
 * @param handle     the owner's handle (null: written without one; never released by GC)
 * @param attributes Calico's secondary attributes ({@code node}, {@code namespace}, {@code pod}, {@code type})
 * @param affineNode the node the block is affine to (null: none)
 */
public record Allocation(Cidr block, IpAddress ip, String handle, Map<String, String> attributes, String affineNode) {

    public Allocation {
        attributes = Map.copyOf(attributes);
    }

    /** The identity a leak is tracked by: the same address held by another handle is another allocation. */
    public record Id(String handle, IpAddress ip) {
    }

    public Id id() {
        return new Id(handle, ip);
    }

    /** {@return the node the address was allocated for}: its {@code node} attribute, else the block's node. */
    public String node() {
        String n = attributes.get("node");
        return n == null || n.isEmpty() ? affineNode : n;
    }

    /** Tunnel addresses (IPIP, VXLAN, WireGuard) belong to their node, not to a pod. */
    public boolean tunnel() {
        String type = attributes.get("type");
        return type != null && type.endsWith("TunnelAddress")
                || handle != null && handle.matches("(ipip|vxlan|vxlan-v6|wireguard|wireguard-v6)-tunnel-addr-.*");
    }

    /** {@return whether a Kubernetes pod owns it} (Calico's CNI writes {@code namespace} and {@code pod}). */
    public boolean ofPod() {
        return attributes.containsKey("pod") && attributes.containsKey("namespace");
    }

    /** {@return whether it was borrowed}: allocated for another node than the block's. */
    public boolean borrowed() {
        return affineNode != null && node() != null && !affineNode.equals(node());
    }

    /** {@return every allocated address of {@code blocks}}, block by block, in address order. */
    public static List<Allocation> inBlocks(List<IPAMBlock> blocks) {
        List<Allocation> out = new ArrayList<>();
        for (IPAMBlock b : blocks) {
            IPAMBlockSpec s = b.spec();
            Cidr cidr = Cidr.parse(s.cidr());
            IpAddress base = cidr.network().address();
            for (int ordinal = 0; ordinal < s.allocations().size(); ordinal++) {
                Integer index = s.allocations().get(ordinal);
                if (index == null || index < 0 || index >= s.attributes().size()) {
                    continue;
                }
                IPAMBlockSpec.AllocationAttribute attr = s.attributes().get(index);
                IpAddress ip = new IpAddress(base.version(), base.high(), base.low() + ordinal);
                out.add(new Allocation(cidr, ip, attr.handleId(), attr.secondary(), s.affineNode()));
            }
        }
        return out;
    }
}
