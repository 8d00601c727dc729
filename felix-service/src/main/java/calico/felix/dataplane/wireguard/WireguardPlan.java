package calico.felix.dataplane.wireguard;

import calico.dataplane.netlink.IpPrefix;
import calico.dataplane.wireguard.WireguardKey;
import calico.dataplane.wireguard.WireguardPeer;
import calico.felix.calc.DataplaneUpdate.HostMetadataUpdate;
import calico.felix.calc.DataplaneUpdate.RouteType;
import calico.felix.calc.DataplaneUpdate.RouteUpdate;
import calico.felix.calc.DataplaneUpdate.WireguardEndpointUpdate;
import calico.felix.dataplane.rules.IpFamily;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.Comparator;

/**
 * What the WireGuard device and its routing table must hold, computed from the model alone (no
 * kernel), for one address family: one peer per other node that has a usable public key of that
 * family and an address of that family, and a route in the family's WireGuard table via the device
 * for each of its allowed IPs.
 *
 * <ul>
 *   <li>a peer's endpoint is its node address and this node's {@code wireguardListeningPort}
 *       (Calico uses one port cluster-wide);
 *   <li>its allowed IPs are the destinations of every {@code REMOTE_WORKLOAD} and
 *       {@code REMOTE_BLOCK} route to that node (workload addresses, and its affine IPAM blocks, as
 *       Calico's block routes: a borrowed address's /32 to another node wins by longest prefix)
 *       and its WireGuard interface address;
 *   <li>a key that two nodes publish is left out for both (as Calico does: traffic to either
 *       would go to whichever holds the private key), and so is a node publishing our own key;
 *   <li>remote workloads of nodes without a peer get no route here: the rule's table lookup
 *       misses and the packet goes on to the main table, unencrypted, as in Calico.
 * </ul>
 *
 * @param peers  by node name
 * @param routes every allowed IP of every peer (the device routes of the WireGuard table)
 */
public record WireguardPlan(Map<String, WireguardPeer> peers, Set<IpPrefix> routes) {

    static final Comparator<IpPrefix> ORDER = Comparator.comparing((IpPrefix p) -> p.address().getHostAddress())
            .thenComparingInt(IpPrefix::length);

    public WireguardPlan {
        peers = Collections.unmodifiableMap(new TreeMap<>(peers));
        TreeSet<IpPrefix> sorted = new TreeSet<>(ORDER);
        sorted.addAll(routes);
        routes = Collections.unmodifiableSet(sorted);
    }

    /** A node's WireGuard identity in one family: its public key and its device's address (either may be null). */
    public record Endpoint(String publicKey, String interfaceAddress) {
    }

    /**
     * IPv4: {@code endpoints} as the model holds them.
     *
     * @param thisNode   this node's name
     * @param ownKey     this node's public key (null before it has one)
     * @param port       the listening port every node uses
     * @param keepalive  {@code wireguardKeepAlive} in seconds, 0 = off
     */
    public static WireguardPlan compute(String thisNode, WireguardKey ownKey, int port, int keepalive,
                                        Map<String, HostMetadataUpdate> hosts,
                                        Map<String, WireguardEndpointUpdate> endpoints,
                                        Map<String, RouteUpdate> routes) {
        Map<String, Endpoint> v4 = new HashMap<>();
        endpoints.forEach((n, e) -> v4.put(n, new Endpoint(e.publicKey(), e.interfaceIpv4Address())));
        return compute(IpFamily.V4, thisNode, ownKey, port, keepalive, false, hosts, v4, routes);
    }

    /**
     * The plan of one family: peers at the nodes' addresses of that family, allowed IPs and table
     * routes of that family only. {@code hostEncryption} ({@code wireguardHostEncryptionEnabled}):
     * each peer's node address is one of its allowed IPs too, so host-to-host traffic takes the
     * tunnel (the device's own UDP to that address carries the mark and skips the table).
     */
    public static WireguardPlan compute(IpFamily family, String thisNode, WireguardKey ownKey, int port, int keepalive,
                                        boolean hostEncryption,
                                        Map<String, HostMetadataUpdate> hosts, Map<String, Endpoint> endpoints,
                                        Map<String, RouteUpdate> routes) {
        Map<String, Integer> keyUsers = new HashMap<>();
        endpoints.values().forEach(e -> {
            if (e.publicKey() != null) {
                keyUsers.merge(e.publicKey(), 1, Integer::sum);
            }
        });
        Map<String, Set<IpPrefix>> allowed = new HashMap<>();
        for (RouteUpdate r : routes.values()) {
            // Blocks too (routeSource CalicoIPAM): a new pod of a known block is covered before its own route comes.
            if ((r.type() == RouteType.REMOTE_WORKLOAD || r.type() == RouteType.REMOTE_BLOCK)
                    && r.dstNode() != null && !r.dstNode().equals(thisNode)) {
                IpPrefix dst = prefix(r.dst());
                if (dst != null && dst.isIpv4() == (family == IpFamily.V4)) {
                    allowed.computeIfAbsent(r.dstNode(), n -> new HashSet<>()).add(dst);
                }
            }
        }
        Map<String, WireguardPeer> peers = new HashMap<>();
        Set<IpPrefix> deviceRoutes = new HashSet<>();
        for (Map.Entry<String, Endpoint> en : endpoints.entrySet()) {
            String node = en.getKey();
            Endpoint e = en.getValue();
            HostMetadataUpdate host = hosts.get(node);
            String nodeAddress = host == null ? null : family == IpFamily.V4 ? host.ipv4Address() : host.ipv6Address();
            if (node.equals(thisNode) || e.publicKey() == null || keyUsers.get(e.publicKey()) > 1
                    || nodeAddress == null || prefix(nodeAddress) == null) {
                continue;
            }
            WireguardKey key = WireguardKey.fromBase64(e.publicKey());
            if (key.equals(ownKey)) {
                continue;
            }
            Set<IpPrefix> ips = new HashSet<>(allowed.getOrDefault(node, Set.of()));
            IpPrefix iface = prefix(e.interfaceAddress());
            if (iface != null) {
                ips.add(IpPrefix.host(iface.address()));
            }
            InetAddress nodeIp = prefix(nodeAddress).address();
            if (hostEncryption) {
                ips.add(IpPrefix.host(nodeIp));
            }
            WireguardPeer peer = new WireguardPeer(key, new InetSocketAddress(nodeIp, port), ips, keepalive);
            peers.put(node, peer);
            deviceRoutes.addAll(peer.allowedIps());
        }
        return new WireguardPlan(peers, deviceRoutes);
    }

    /** {@return the peers by public key}, as a device state holds them */
    public Map<WireguardKey, WireguardPeer> byKey() {
        Map<WireguardKey, WireguardPeer> out = new HashMap<>();
        peers.values().forEach(p -> out.put(p.publicKey(), p));
        return out;
    }

    private static IpPrefix prefix(String text) {
        if (text == null) {
            return null;
        }
        try {
            return IpPrefix.parse(text);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** Nodes in {@link #peers}, for logs. */
    public List<String> nodes() {
        return List.copyOf(peers.keySet());
    }
}
