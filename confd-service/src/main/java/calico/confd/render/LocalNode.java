package calico.confd.render;

import calico.api.model.ASNumber;
import calico.api.model.Node;
import calico.api.model.NodeSpec;
import calico.api.net.Cidr;
import java.util.Map;
import java.util.Optional;

/**
 * A node's BGP identity: its addresses (the part before the {@code /} of
 * {@code spec.bgp.ipv4Address}/{@code ipv6Address}), AS and route-reflector cluster ID.
 */
record LocalNode(String name, Map<String, String> labels, String ipv4, String ipv6, long asNumber,
                 String clusterId) {

    /** Calico's AS when neither the node nor the default BGPConfiguration sets one. */
    static final long DEFAULT_AS = 64512;

    /** {@return the node's identity}, or empty when it has no (valid) BGP address */
    static Optional<LocalNode> of(Node node, long defaultAs) {
        NodeSpec.BGP bgp = node.spec() == null ? null : node.spec().bgp();
        if (bgp == null) {
            return Optional.empty();
        }
        String v4 = address(bgp.ipv4Address(), 4);
        String v6 = address(bgp.ipv6Address(), 6);
        if (v4 == null && v6 == null) {
            return Optional.empty();
        }
        ASNumber as = bgp.asNumber();
        String cluster = bgp.routeReflectorClusterID() == null || bgp.routeReflectorClusterID().isEmpty()
                ? null : bgp.routeReflectorClusterID();
        return Optional.of(new LocalNode(node.metadata().name(), node.metadata().labels(), v4, v6,
                as == null ? defaultAs : as.value(), cluster));
    }

    private static String address(String cidr, int family) {
        if (cidr == null || cidr.isEmpty()) {
            return null;
        }
        return Cidr.tryParseCidrOrIp(cidr).filter(c -> c.version() == family).map(c -> c.address().toString())
                .orElse(null);
    }

    String address(int family) {
        return family == 4 ? ipv4 : ipv6;
    }
}
