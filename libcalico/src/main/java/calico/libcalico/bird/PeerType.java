package calico.libcalico.bird;

import java.util.Arrays;
import java.util.Optional;

/**
 * How a BGP session was configured, read from the protocol name confd gives it: {@code Mesh_<ip>}
 * (node-to-node mesh), {@code Node_<ip>} (a BGPPeer for this node), {@code Global_<ip>} (a global
 * BGPPeer). Other protocols (local-workload sessions, static, kernel) are not peers Calico reports.
 */
public enum PeerType {
    NODE_MESH("Mesh_", "NodeMesh", "node-to-node mesh"),
    NODE_PEER("Node_", "NodePeer", "node specific"),
    GLOBAL_PEER("Global_", "GlobalPeer", "global");

    private final String prefix;
    private final String statusName;
    private final String displayName;

    PeerType(String prefix, String statusName, String displayName) {
        this.prefix = prefix;
        this.statusName = statusName;
        this.displayName = displayName;
    }

    /** {@return the CalicoNodeStatus name} ({@code NodeMesh}, {@code NodePeer}, {@code GlobalPeer}) */
    public String statusName() {
        return statusName;
    }

    /** {@return what {@code calicoctl node status} prints} ({@code node-to-node mesh}, {@code node specific}, {@code global}) */
    public String displayName() {
        return displayName;
    }

    /** {@return the type of a BGP protocol by its name}, empty for any other protocol */
    public static Optional<PeerType> of(BirdProtocol p) {
        if (!"BGP".equals(p.proto())) {
            return Optional.empty();
        }
        return Arrays.stream(values()).filter(t -> p.name().startsWith(t.prefix)).findFirst();
    }

    /**
     * {@return the peer's address}: the {@code Neighbor address} BIRD reports, else the one in the
     * name ({@code Mesh_10_0_0_2} → 10.0.0.2, {@code Mesh_fd99__2} → fd99::2, a {@code _port_<n>} suffix dropped)
     */
    public static String address(BirdProtocol p) {
        if (p.neighbor() != null && !p.neighbor().isEmpty()) {
            return p.neighbor();
        }
        String rest = p.name().substring(p.name().indexOf('_') + 1);
        int port = rest.indexOf("_port_");
        if (port >= 0) {
            rest = rest.substring(0, port);
        }
        return rest.matches("[0-9]+(_[0-9]+){3}") ? rest.replace('_', '.') : rest.replace('_', ':');
    }

    /** {@return whether the peer is an IPv6 address} */
    public static boolean ipv6(BirdProtocol p) {
        return address(p).indexOf(':') >= 0;
    }
}
