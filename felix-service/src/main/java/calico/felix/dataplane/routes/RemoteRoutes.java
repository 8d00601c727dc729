package calico.felix.dataplane.routes;

import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.DataplaneUpdate.IpPoolUpdate;
import calico.felix.calc.DataplaneUpdate.RouteType;
import calico.felix.calc.DataplaneUpdate.RouteUpdate;
import calico.felix.calc.DataplaneUpdate.VtepUpdate;
import calico.felix.calc.FelixSettings;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.Encapsulation;
import calico.felix.dataplane.rules.IpFamily;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Decides, from the dataplane's model alone (plus this node's underlay subnet, which the caller
 * reads from the kernel), what felix programs for traffic to other nodes' workloads: the VXLAN
 * device and its neighbour and FDB entries, whether {@code tunl0} is used, and one route per
 * remote destination. Pure: no kernel access, so every mode's rendering is unit-tested
 * ({@code RemoteRoutesTest}), IPIP included, which this machine's kernel cannot run.
 *
 * <p>One plan per address family, by the same rules (Calico's felix runs one VXLAN manager per
 * family): IPv4 over {@code vxlan.calico} and {@code tunl0}, IPv6 over {@code vxlan-v6.calico}
 * (no IPIP for IPv6). A family's plan reads only that family's routes, pools, VTEP half and
 * underlay address. The rules, as Calico's felix applies them:
 * <ul>
 *   <li>This node is the {@code dstNode} of the model's {@code LOCAL_HOST} route of the family
 *       (its Node has an address of that family); without one, nothing is planned; nor for IPv6
 *       when {@code ipv6Support} is false.</li>
 *   <li>Whether VXLAN and IPIP are on: {@link Encapsulation} (the setting when set, else whether
 *       any pool of the family uses the mode), the same decision the MTUs and the input rules read.</li>
 *   <li>Destinations, by {@code routeSource}: {@code CalicoIPAM} — every {@code REMOTE_BLOCK}
 *       route, plus each {@code REMOTE_WORKLOAD} /32 that no remote block of the same node
 *       covers (a borrowed address), and a blackhole for each {@code LOCAL_BLOCK};
 *       {@code WorkloadIPs} — every {@code REMOTE_WORKLOAD} route. A destination outside every
 *       pool, or whose node has no address yet, gets nothing.</li>
 *   <li>Per destination, by its pool: VXLAN when {@code vxlanMode} is {@code Always}, or
 *       {@code CrossSubnet} and the node is in another subnet, VXLAN is enabled and both VTEPs
 *       are known: {@code via <remote tunnel IP> dev vxlan.calico onlink}. Else IPIP likewise
 *       ({@code via <node IP> dev tunl0 onlink}). Else, for a {@code CrossSubnet} pool whose node
 *       shares this node's subnet, a plain {@code via <node IP>}. Else (no encapsulation) nothing:
 *       BIRD carries those routes.</li>
 *   <li>The VXLAN device exists while VXLAN is enabled and this node has a VTEP; every other
 *       node's VTEP gets a neighbour entry (tunnel IP to MAC) and an FDB entry (MAC to node IP).</li>
 * </ul>
 */
public final class RemoteRoutes {

    /** Calico's VXLAN device name. */
    public static final String VXLAN_DEVICE = "vxlan.calico";
    /** Calico's IPv6 VXLAN device name. */
    public static final String VXLAN_V6_DEVICE = "vxlan-v6.calico";
    /** Calico's IPIP device name (the kernel's fallback device of the ipip module). */
    public static final String IPIP_DEVICE = "tunl0";

    private RemoteRoutes() {
    }

    /** How a remote destination is reached. */
    public enum Kind {
        /** {@code via <remote tunnel IP> dev vxlan.calico onlink}. */
        VXLAN,
        /** {@code via <node IP> dev tunl0 onlink}. */
        IPIP,
        /** {@code via <node IP>}: the node is on this node's subnet. */
        DIRECT,
        /** {@code blackhole}: one of this node's blocks (its workloads have their own /32s). */
        BLACKHOLE
    }

    /** One route to program; {@code gateway} is null for a blackhole. */
    public record Planned(String dst, Kind kind, String gateway) {
    }

    /** {@return the VXLAN device of {@code family}}: {@link #VXLAN_DEVICE} or {@link #VXLAN_V6_DEVICE}. */
    public static String vxlanDevice(IpFamily family) {
        return family == IpFamily.V4 ? VXLAN_DEVICE : VXLAN_V6_DEVICE;
    }

    /** {@return the prefix length of one address of {@code family}}: 32 or 128. */
    public static int hostPrefixLength(IpFamily family) {
        return family == IpFamily.V4 ? 32 : 128;
    }

    /** This node's VXLAN device: Calico's settings and this node's VTEP. */
    public record VxlanDevice(int vni, int port, String parentAddress, String mac, String tunnelAddress) {
    }

    /**
     * Everything to program.
     *
     * @param vxlan      the device, empty when VXLAN is off (an existing device then goes)
     * @param ipip       whether routes go through {@code tunl0}
     * @param routes     by destination
     * @param neighbours remote tunnel IP to MAC, on the VXLAN device
     * @param fdb        remote VTEP MAC to node IP, on the VXLAN device
     * @param ipipAddress this node's IPIP tunnel address for {@code tunl0} (its Node's
     *                    {@code ipv4IPIPTunnelAddr}); empty when IPIP is off or the Node has none
     */
    public record Plan(Optional<VxlanDevice> vxlan, boolean ipip, Map<String, Planned> routes,
                       Map<String, String> neighbours, Map<String, String> fdb, Optional<String> ipipAddress) {
        public Plan {
            routes = Map.copyOf(routes);
            neighbours = Map.copyOf(neighbours);
            fdb = Map.copyOf(fdb);
            java.util.Objects.requireNonNull(ipipAddress, "ipipAddress");
        }

        public Plan(Optional<VxlanDevice> vxlan, boolean ipip, Map<String, Planned> routes,
                    Map<String, String> neighbours, Map<String, String> fdb) {
            this(vxlan, ipip, routes, neighbours, fdb, Optional.empty());
        }

        static Plan empty() {
            return new Plan(Optional.empty(), false, Map.of(), Map.of(), Map.of());
        }
    }

    /**
     * What to change on {@code tunl0} (Calico's IPIP manager): with IPIP on, the device up, its MTU
     * {@code ipipMTU} (else the host MTU less 20) and exactly this node's tunnel address /32 among its
     * IPv4 addresses (none when the Node has none); with IPIP off, no IPv4 address left on it. The
     * device itself is the kernel's (the {@code ipip} module's fallback device): never created or
     * deleted here.
     *
     * @param add    IPv4 addresses to add (/32)
     * @param delete IPv4 addresses to remove
     * @param mtu    the MTU to set, empty to leave it
     * @param up     whether to set the link up
     */
    public record Tunl0Changes(List<String> add, List<String> delete, java.util.OptionalInt mtu, boolean up) {
        public Tunl0Changes {
            add = List.copyOf(add);
            delete = List.copyOf(delete);
        }

        /** {@return whether nothing is to change} */
        public boolean none() {
            return add.isEmpty() && delete.isEmpty() && mtu.isEmpty() && !up;
        }
    }

    /**
     * {@return the changes that bring {@code tunl0} to {@code plan}}.
     *
     * @param haveAddresses the device's IPv4 addresses now, as {@code a.b.c.d/len}
     * @param haveMtu       its MTU now
     * @param haveUp        whether it is up now
     * @param ipipMtu       the MTU it should have ({@code Mtus.ipip()})
     */
    public static Tunl0Changes tunl0(Plan plan, List<String> haveAddresses, int haveMtu, boolean haveUp, int ipipMtu) {
        if (!plan.ipip()) {
            return new Tunl0Changes(List.of(), haveAddresses, java.util.OptionalInt.empty(), false);
        }
        Optional<String> want = plan.ipipAddress().map(a -> a + "/32");
        List<String> delete = haveAddresses.stream().filter(a -> !want.equals(Optional.of(a))).toList();
        List<String> add = want.filter(a -> !haveAddresses.contains(a)).map(List::of).orElse(List.of());
        return new Tunl0Changes(add, delete,
                haveMtu == ipipMtu ? java.util.OptionalInt.empty() : java.util.OptionalInt.of(ipipMtu), !haveUp);
    }

    /**
     * {@return whether {@code u} changes what {@link #plan} reads}: the routes, the VTEPs, the
     * pools, the configuration (also the VXLAN device's MTU) and whether the model is in sync. A
     * batch without such an update leaves the plan as it was, so the dataplane skips the update.
     */
    public static boolean reads(DataplaneUpdate u) {
        return u instanceof DataplaneUpdate.RouteUpdate || u instanceof DataplaneUpdate.RouteRemove
                || u instanceof DataplaneUpdate.VtepUpdate || u instanceof DataplaneUpdate.VtepRemove
                || u instanceof DataplaneUpdate.IpipTunnelAddressUpdate
                || u instanceof DataplaneUpdate.IpipTunnelAddressRemove
                || u instanceof DataplaneUpdate.IpPoolUpdate || u instanceof DataplaneUpdate.IpPoolRemove
                || u instanceof DataplaneUpdate.ConfigUpdate || u instanceof DataplaneUpdate.InSync;
    }

    /** {@return this node's name and IPv4 address}, from the model's IPv4 LOCAL_HOST route; empty without one. */
    public static Optional<RouteUpdate> localHost(DataplaneModel model) {
        return localHost(model, IpFamily.V4);
    }

    /** {@return this node's name and address of {@code family}}, from the model's LOCAL_HOST route of that family. */
    public static Optional<RouteUpdate> localHost(DataplaneModel model, IpFamily family) {
        return model.routes().values().stream()
                .filter(r -> r.type() == RouteType.LOCAL_HOST && r.dstNodeIp() != null && IpFamily.of(r.dst()) == family)
                .findFirst();
    }

    /** {@return the IPv4 plan}: {@link #plan(DataplaneModel, IpFamily, Optional)} for {@link IpFamily#V4}. */
    public static Plan plan(DataplaneModel model, Optional<Cidr> localSubnet) {
        return plan(model, IpFamily.V4, localSubnet);
    }

    /** A node's VTEP half of one family; null fields when that half is absent. */
    private record Half(String mac, String tunnelAddress, String parentAddress) {
        static Half of(VtepUpdate v, IpFamily family) {
            if (v == null) {
                return new Half(null, null, null);
            }
            return family == IpFamily.V4 ? new Half(v.mac(), v.ipv4Addr(), v.parentDeviceIpv4())
                    : new Half(v.macV6(), v.ipv6Addr(), v.parentDeviceIpv6());
        }

        boolean present() {
            return tunnelAddress != null && mac != null && parentAddress != null;
        }
    }

    /**
     * {@return the plan for {@code family}}.
     *
     * @param localSubnet this node's underlay subnet of that family (the prefix of its address on its
     *                    interface), empty when unknown: then no node counts as same-subnet
     */
    public static Plan plan(DataplaneModel model, IpFamily family, Optional<Cidr> localSubnet) {
        Optional<RouteUpdate> self = localHost(model, family);
        if (self.isEmpty() || (family == IpFamily.V6 && !model.config().ipv6Support())) {
            return Plan.empty(); // Calico's felix runs no IPv6 VXLAN manager without ipv6Support
        }
        String hostname = self.get().dstNode();
        FelixSettings settings = model.config();
        Encapsulation encap = Encapsulation.of(model);
        boolean vxlanOn = family == IpFamily.V4 ? encap.vxlan() : encap.vxlanV6();
        boolean ipipOn = family == IpFamily.V4 && encap.ipip();

        Half local = Half.of(model.vteps().get(hostname), family);
        Optional<VxlanDevice> device = vxlanOn && local.present()
                ? Optional.of(new VxlanDevice(settings.vxlanVni(), settings.vxlanPort(), local.parentAddress(),
                local.mac(), local.tunnelAddress()))
                : Optional.empty();
        Map<String, String> neighbours = new TreeMap<>();
        Map<String, String> fdb = new TreeMap<>();
        if (device.isPresent()) {
            for (VtepUpdate v : model.vteps().values()) {
                Half h = Half.of(v, family);
                if (!v.node().equals(hostname) && h.present()) {
                    neighbours.put(h.tunnelAddress(), h.mac());
                    fdb.put(h.mac(), h.parentAddress());
                }
            }
        }

        boolean byBlocks = settings.routesFromIpamBlocks();
        // Each node's remote blocks, parsed once (not once per workload route).
        Map<String, List<Cidr>> remoteBlocks = new HashMap<>();
        for (RouteUpdate r : model.routes().values()) {
            if (r.type() == RouteType.REMOTE_BLOCK && IpFamily.of(r.dst()) == family) {
                Cidr.tryParse(r.dst()).ifPresent(c -> remoteBlocks.computeIfAbsent(r.dstNode(), n -> new ArrayList<>()).add(c));
            }
        }
        Map<String, Planned> routes = new TreeMap<>();
        for (RouteUpdate r : model.routes().values()) {
            if (IpFamily.of(r.dst()) != family) {
                continue;
            }
            IpPoolUpdate pool = r.poolName() == null ? null : model.pools().get(r.poolName());
            if (pool == null) {
                continue;
            }
            boolean wanted = switch (r.type()) {
                case REMOTE_BLOCK -> byBlocks;
                case REMOTE_WORKLOAD -> !byBlocks || !coveredBySameNode(r, remoteBlocks);
                case LOCAL_BLOCK -> byBlocks;
                default -> false;
            };
            if (!wanted) {
                continue;
            }
            if (r.type() == RouteType.LOCAL_BLOCK) {
                routes.put(r.dst(), new Planned(r.dst(), Kind.BLACKHOLE, null));
                continue;
            }
            if (r.dstNodeIp() == null) {
                continue;
            }
            boolean sameSubnet = localSubnet.map(s -> IpAddress.tryParse(r.dstNodeIp()).map(s::contains).orElse(false))
                    .orElse(false);
            Planned p = route(r, pool, sameSubnet, device.isPresent(), ipipOn,
                    Half.of(model.vteps().get(r.dstNode()), family));
            if (p != null) {
                routes.put(r.dst(), p);
            }
        }
        return new Plan(device, ipipOn, routes, neighbours, fdb,
                ipipOn ? model.ipipTunnelAddress(hostname) : Optional.empty());
    }

    private static Planned route(RouteUpdate r, IpPoolUpdate pool, boolean sameSubnet, boolean vxlanDevice,
                                 boolean ipipOn, Half remoteVtep) {
        if (encapsulates(pool.vxlanMode(), sameSubnet)) {
            return vxlanDevice && remoteVtep.present()
                    ? new Planned(r.dst(), Kind.VXLAN, remoteVtep.tunnelAddress()) : null;
        }
        if (encapsulates(pool.ipipMode(), sameSubnet)) {
            return ipipOn ? new Planned(r.dst(), Kind.IPIP, r.dstNodeIp()) : null;
        }
        boolean crossSubnet = "CrossSubnet".equals(pool.vxlanMode()) || "CrossSubnet".equals(pool.ipipMode());
        return crossSubnet && sameSubnet ? new Planned(r.dst(), Kind.DIRECT, r.dstNodeIp()) : null;
    }

    private static boolean encapsulates(String mode, boolean sameSubnet) {
        return "Always".equals(mode) || ("CrossSubnet".equals(mode) && !sameSubnet);
    }

    /** A workload /32 inside a remote block of its own node needs no route of its own. */
    private static boolean coveredBySameNode(RouteUpdate workload, Map<String, List<Cidr>> remoteBlocks) {
        Optional<Cidr> dst = Cidr.tryParse(workload.dst());
        return dst.isPresent() && remoteBlocks.getOrDefault(workload.dstNode(), List.of()).stream()
                .anyMatch(c -> c.contains(dst.get()));
    }
}
