package calico.api.validation;

import calico.api.model.Node;
import calico.api.model.NodeSpec;
import java.util.Set;

/** Checks nodes: BGP addresses (CIDRs whose address is the BGP next hop), tunnel addresses, address types. */
final class NodeValidator {

    static final Set<String> ADDRESS_TYPES = Set.of("CalicoNodeIP", "InternalIP", "ExternalIP");

    private static final FieldPath SPEC = FieldPath.of("spec");

    private NodeValidator() {
    }

    static void validate(Node node, Errors errors) {
        MetadataValidator.validate(node.metadata(), node.resourceKind(), true, errors);
        NodeSpec s = node.spec();
        if (s == null) {
            return;
        }
        if (s.bgp() != null) {
            NodeSpec.BGP b = s.bgp();
            FieldPath bp = SPEC.field("bgp");
            if (b.asNumber() == null && b.ipv4Address() == null && b.ipv6Address() == null
                    && b.ipv4IPIPTunnelAddr() == null && b.routeReflectorClusterID() == null) {
                errors.add(bp, "must not be empty when present");
            }
            BgpValidator.asNumber(b.asNumber(), bp.field("asNumber"), errors);
            cidrOfVersion(b.ipv4Address(), 4, bp.field("ipv4Address"), errors);
            cidrOfVersion(b.ipv6Address(), 6, bp.field("ipv6Address"), errors);
            ip(b.ipv4IPIPTunnelAddr(), 4, bp.field("ipv4IPIPTunnelAddr"), errors);
            ip(b.routeReflectorClusterID(), 4, bp.field("routeReflectorClusterID"), errors);
        }
        ip(s.ipv4VXLANTunnelAddr(), 4, SPEC.field("ipv4VXLANTunnelAddr"), errors);
        ip(s.ipv6VXLANTunnelAddr(), 6, SPEC.field("ipv6VXLANTunnelAddr"), errors);
        if (s.wireguard() != null) {
            ip(s.wireguard().interfaceIPv4Address(), 4, SPEC.field("wireguard").field("interfaceIPv4Address"), errors);
            ip(s.wireguard().interfaceIPv6Address(), 6, SPEC.field("wireguard").field("interfaceIPv6Address"), errors);
        }
        for (int i = 0; i < s.addresses().size(); i++) {
            NodeSpec.Address a = s.addresses().get(i);
            FieldPath ap = SPEC.field("addresses").index(i);
            if (a == null) {
                errors.add(ap, "must not be null");
                continue;
            }
            if (a.address() == null || a.address().isEmpty()) {
                errors.add(ap.field("address"), "is required");
            } else {
                Cidrs.cidrOrIp(a.address(), ap.field("address"), errors);
            }
            if (a.type() != null && !ADDRESS_TYPES.contains(a.type())) {
                errors.add(ap.field("type"), "must be CalicoNodeIP, InternalIP or ExternalIP");
            }
        }
    }

    /** A CIDR (or bare address) of one IP version, host bits allowed: the address is the node's own. */
    private static void cidrOfVersion(String v, int version, FieldPath path, Errors errors) {
        if (v == null || v.isEmpty()) {
            return;
        }
        Cidrs.cidrOrIp(v, path, errors).filter(c -> c.version() != version)
                .ifPresent(c -> errors.add(path, "must be an IPv" + version + " address"));
    }

    private static void ip(String v, int version, FieldPath path, Errors errors) {
        if (v != null && !v.isEmpty()) {
            Cidrs.ip(v, version, path, errors);
        }
    }
}
