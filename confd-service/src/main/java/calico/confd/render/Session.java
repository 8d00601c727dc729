package calico.confd.render;

import java.util.List;

/**
 * One BGP session as rendered into a {@code protocol bgp} block. Fields are what the template
 * prints; {@code null} means "leave the BIRD default".
 *
 * @param name         BIRD protocol name, Calico's: {@code Mesh_10_0_0_2}, {@code Node_…}, {@code Global_…}
 * @param type         where it comes from, also the metrics' {@code peer_type}
 * @param source       the resource that asked for it ({@code BGPConfiguration default}, {@code BGPPeer rr})
 * @param family       {@code ipv4} or {@code ipv6}: the channel the session carries
 * @param neighbor     the peer's address
 * @param port         the peer's port, {@code null} for 179
 * @param asNumber     the peer's AS
 * @param localAddress source address ({@code sourceAddress: UseNodeIP}); {@code null} to let the kernel choose
 * @param localAs      this node's AS on this session ({@code localASNumber} or the node's)
 * @param password     the session's MD5 password, already resolved from its secret
 * @param rrClusterId  when set, the peer is a route-reflector client of this node
 * @param restartTime  graceful restart time in seconds ({@code maxRestartTime})
 * @param ttlSecurity  GTSM hop count ({@code ttlSecurity}), {@code null} for plain multihop
 * @param allowLocalAs {@code numAllowedLocalASNumbers}
 * @param nextHop      {@code keep} or {@code self}, or {@code null}
 * @param importCalls  BGPFilter import functions, in the peer's order
 * @param exportCalls  BGPFilter export functions, in the peer's order
 * @param reachableBy  {@code reachableBy}: the gateway of a static route to the peer, or {@code null}
 */
public record Session(String name, PeerType type, String source, String family, String neighbor, Integer port,
                      long asNumber, String localAddress, long localAs, String password, String rrClusterId,
                      Long restartTime, Integer ttlSecurity, Integer allowLocalAs, String nextHop,
                      List<String> importCalls, List<String> exportCalls, String reachableBy) {

    public Session {
        importCalls = List.copyOf(importCalls);
        exportCalls = List.copyOf(exportCalls);
    }

    /** Session origin, as Calico names protocols after it. */
    public enum PeerType {
        MESH("Mesh"), NODE("Node"), GLOBAL("Global"), LOCAL_WORKLOAD("Local_Workload");

        private final String prefix;

        PeerType(String prefix) {
            this.prefix = prefix;
        }

        public String prefix() {
            return prefix;
        }

        /** {@return the type of a BIRD protocol name}, or {@code null} for non-BGP-peer protocols */
        public static PeerType ofProtocol(String protocolName) {
            for (PeerType t : values()) {
                if (protocolName.startsWith(t.prefix + "_")) {
                    return t;
                }
            }
            return null;
        }
    }

    /** {@return Calico's protocol name}: prefix, address with {@code .}/{@code :} as {@code _}, and a non-default port */
    public static String protocolName(PeerType type, String address, Integer port) {
        String n = type.prefix() + "_" + address.replace('.', '_').replace(':', '_');
        return port == null ? n : n + "_port_" + port;
    }

    /** {@return whether AS numbers differ} (the filters' {@code peerType: eBGP}) */
    public boolean ebgp() {
        return asNumber != localAs;
    }
}
