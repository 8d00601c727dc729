package calico.node.startup.steps;

import calico.api.model.EncapsulationMode;
import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.Node;
import calico.api.model.NodeSpec;
import calico.api.model.NodeStatus;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import calico.api.selector.Selector;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.ipam.AssignResult;
import calico.libcalico.ipam.AutoAssignRequest;
import calico.libcalico.ipam.IntendedUse;
import calico.libcalico.ipam.IpamClient;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The node's tunnel addresses, as calico-node's {@code allocate-tunnel-addrs} keeps them: for each
 * kind (IPIP, IPv4 VXLAN, IPv6 VXLAN) an address from IPAM, in a block affine to this node, while
 * an enabled pool of that IP version that selects the node, allows {@code Tunnel} use and has that
 * encapsulation ({@code Always} or {@code CrossSubnet}) exists; released when none does. The
 * WireGuard interface addresses (IPv4, IPv6) need no encapsulation, only WireGuard running on the
 * node (felix has published its public key of that family in the Node's status) and not in host
 * encryption mode (where the device uses the node's own address). Each is held by Calico's handle
 * ({@code ipip-tunnel-addr-<node>}, {@code vxlan-tunnel-addr-<node>}, {@code vxlan-v6-tunnel-addr-<node>},
 * {@code wireguard-tunnel-addr-<node>}, {@code wireguard-v6-tunnel-addr-<node>}) with Calico's
 * attributes ({@code node}, {@code type}), so Calico's tools and GC recognise it. A kept address is
 * one its handle still holds and a fitting pool still contains; otherwise the handle is released
 * and a new address assigned.
 */
final class TunnelAddresses {

    /** The tunnel kinds, with Calico's handle prefixes and allocation types. */
    enum Kind {
        IPIP("ipip-tunnel-addr-", "ipipTunnelAddress", 4),
        VXLAN("vxlan-tunnel-addr-", "vxlanTunnelAddress", 4),
        VXLAN_V6("vxlan-v6-tunnel-addr-", "vxlanV6TunnelAddress", 6),
        WIREGUARD("wireguard-tunnel-addr-", "wireguardTunnelAddress", 4),
        WIREGUARD_V6("wireguard-v6-tunnel-addr-", "wireguardV6TunnelAddress", 6);

        final String handlePrefix;
        final String type;
        final int version;

        Kind(String handlePrefix, String type, int version) {
            this.handlePrefix = handlePrefix;
            this.type = type;
            this.version = version;
        }

        String handle(String node) {
            return handlePrefix + node;
        }

        boolean wants(IPPoolSpec pool) {
            EncapsulationMode m = switch (this) {
                case IPIP -> pool.ipipMode();
                case VXLAN, VXLAN_V6 -> pool.vxlanMode();
                case WIREGUARD, WIREGUARD_V6 -> EncapsulationMode.Always;
            };
            return m == EncapsulationMode.Always || m == EncapsulationMode.CrossSubnet;
        }

        /** WireGuard's kinds only while felix runs WireGuard of that family here (its key is published). */
        boolean runsOn(Node node, boolean wireguardHostEncryption) {
            NodeStatus st = node.status();
            return switch (this) {
                case IPIP, VXLAN, VXLAN_V6 -> true;
                case WIREGUARD -> !wireguardHostEncryption && st != null && present(st.wireguardPublicKey());
                case WIREGUARD_V6 -> !wireguardHostEncryption && st != null && present(st.wireguardPublicKeyV6());
            };
        }

        String get(NodeSpec s) {
            return switch (this) {
                case IPIP -> s.bgp() == null ? null : s.bgp().ipv4IPIPTunnelAddr();
                case VXLAN -> s.ipv4VXLANTunnelAddr();
                case VXLAN_V6 -> s.ipv6VXLANTunnelAddr();
                case WIREGUARD -> s.wireguard() == null ? null : s.wireguard().interfaceIPv4Address();
                case WIREGUARD_V6 -> s.wireguard() == null ? null : s.wireguard().interfaceIPv6Address();
            };
        }

        NodeSpec with(NodeSpec s, String addr) {
            return switch (this) {
                case IPIP -> {
                    NodeSpec.BGP b = s.bgp() == null ? new NodeSpec.BGP(null, null, null, null, null) : s.bgp();
                    NodeSpec.BGP nb = new NodeSpec.BGP(b.asNumber(), b.ipv4Address(), b.ipv6Address(), addr,
                            b.routeReflectorClusterID());
                    yield new NodeSpec(nb.equals(new NodeSpec.BGP(null, null, null, null, null)) ? null : nb,
                            s.ipv4VXLANTunnelAddr(), s.vxlanTunnelMACAddr(), s.ipv6VXLANTunnelAddr(),
                            s.vxlanTunnelMACAddrV6(), s.orchRefs(), s.wireguard(), s.addresses(), s.interfaces());
                }
                case VXLAN -> new NodeSpec(s.bgp(), addr, s.vxlanTunnelMACAddr(), s.ipv6VXLANTunnelAddr(),
                        s.vxlanTunnelMACAddrV6(), s.orchRefs(), s.wireguard(), s.addresses(), s.interfaces());
                case VXLAN_V6 -> new NodeSpec(s.bgp(), s.ipv4VXLANTunnelAddr(), s.vxlanTunnelMACAddr(), addr,
                        s.vxlanTunnelMACAddrV6(), s.orchRefs(), s.wireguard(), s.addresses(), s.interfaces());
                case WIREGUARD, WIREGUARD_V6 -> {
                    NodeSpec.Wireguard w = s.wireguard() == null ? new NodeSpec.Wireguard(null, null) : s.wireguard();
                    NodeSpec.Wireguard nw = this == WIREGUARD ? new NodeSpec.Wireguard(addr, w.interfaceIPv6Address())
                            : new NodeSpec.Wireguard(w.interfaceIPv4Address(), addr);
                    yield new NodeSpec(s.bgp(), s.ipv4VXLANTunnelAddr(), s.vxlanTunnelMACAddr(), s.ipv6VXLANTunnelAddr(),
                            s.vxlanTunnelMACAddrV6(), s.orchRefs(),
                            nw.equals(new NodeSpec.Wireguard(null, null)) ? null : nw, s.addresses(), s.interfaces());
                }
            };
        }

        private static boolean present(String s) {
            return s != null && !s.isEmpty();
        }
    }

    private final Datastore datastore;
    private final IpamClient ipam;

    TunnelAddresses(Datastore datastore, IpamClient ipam) {
        this.datastore = datastore;
        this.ipam = ipam;
    }

    /**
     * {@return the Node as stored after this step} (written only if an address changed)
     *
     * @param wireguardHostEncryption {@code wireguardHostEncryptionEnabled}: the WireGuard device uses the node's address
     */
    Node reconcile(Node node, boolean wireguardHostEncryption, Changes changes) {
        String name = node.metadata().name();
        List<IPPool> pools = datastore.list(ResourceKind.IP_POOL).items().stream().map(IPPool.class::cast).toList();
        NodeSpec spec = node.spec();
        for (Kind k : Kind.values()) {
            List<Cidr> fitting = !k.runsOn(node, wireguardHostEncryption) ? List.of()
                    : pools.stream().filter(p -> fits(p, k, node)).map(p -> Cidr.parse(p.spec().cidr())).toList();
            String current = k.get(spec);
            String handle = k.handle(name);
            if (fitting.isEmpty()) {
                ipam.releaseByHandle(handle);
                if (current != null) {
                    spec = k.with(spec, null);
                    changes.add("released " + k.type + " " + current + " of node " + name + " (no pool needs it)");
                }
                continue;
            }
            if (current != null && kept(current, handle, fitting)) {
                continue;
            }
            ipam.releaseByHandle(handle);
            AssignResult r = ipam.autoAssign(new AutoAssignRequest(handle, name, k.version == 4 ? 1 : 0,
                    k.version == 6 ? 1 : 0, k.version == 4 ? fitting : List.of(), k.version == 6 ? fitting : List.of(),
                    Map.of("node", name, "type", k.type), IntendedUse.TUNNEL));
            String addr = (k.version == 4 ? r.ipv4() : r.ipv6()).get(0).address().toString();
            spec = k.with(spec, addr);
            changes.add("assigned " + k.type + " " + addr + " to node " + name
                    + (current == null ? "" : " (was " + current + ")"));
        }
        if (spec.equals(node.spec())) {
            return node;
        }
        return (Node) datastore.update(new Node(node.metadata(), spec, node.status()));
    }

    /** The address is still this handle's and inside a pool that needs it. */
    private boolean kept(String current, String handle, List<Cidr> fitting) {
        Optional<IpAddress> ip = IpAddress.tryParse(current);
        return ip.isPresent() && fitting.stream().anyMatch(c -> c.contains(ip.get()))
                && ipam.addressesByHandle(handle).contains(ip.get());
    }

    private static boolean fits(IPPool pool, Kind k, Node node) {
        IPPoolSpec s = pool.spec();
        Optional<Cidr> cidr = Cidr.tryParse(s.cidr());
        if (cidr.isEmpty() || cidr.get().version() != k.version || Boolean.TRUE.equals(s.disabled())
                || pool.metadata().deletionTimestamp() != null || !k.wants(s)) {
            return false;
        }
        if (!s.allowedUses().isEmpty() && !s.allowedUses().contains(IPPoolSpec.AllowedUse.Tunnel)) {
            return false;
        }
        String sel = s.nodeSelector();
        return sel == null || sel.isBlank() || Selector.parse(sel).matches(node.metadata().labels());
    }
}
