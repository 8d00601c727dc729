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
 * <p>IPv4 only (IPv6 VXLAN is not programmed yet). The rules, as Calico's felix applies them:
 * <ul>
 *   <li>This node is the {@code dstNode} of the model's IPv4 {@code LOCAL_HOST} route (its Node
 *       has an address); without one, nothing is planned.</li>
 *   <li>Whether VXLAN and IPIP are on: {@link Encapsulation} (the setting when set, else whether
 *       any IPv4 pool uses the mode), the same decision the MTUs and the input rules read.</li>
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
     */
    public record Plan(Optional<VxlanDevice> vxlan, boolean ipip, Map<String, Planned> routes,
                       Map<String, String> neighbours, Map<String, String> fdb) {
        public Plan {
            routes = Map.copyOf(routes);
            neighbours = Map.copyOf(neighbours);
            fdb = Map.copyOf(fdb);
        }

        static Plan empty() {
            return new Plan(Optional.empty(), false, Map.of(), Map.of(), Map.of());
        }
    }

    /**
     * {@return whether {@code u} changes what {@link #plan} reads}: the routes, the VTEPs, the
     * pools, the configuration (also the VXLAN device's MTU) and whether the model is in sync. A
     * batch without such an update leaves the plan as it was, so the dataplane skips the update.
     */
    public static boolean reads(DataplaneUpdate u) {
        return u instanceof DataplaneUpdate.RouteUpdate || u instanceof DataplaneUpdate.RouteRemove
                || u instanceof DataplaneUpdate.VtepUpdate || u instanceof DataplaneUpdate.VtepRemove
                || u instanceof DataplaneUpdate.IpPoolUpdate || u instanceof DataplaneUpdate.IpPoolRemove
                || u instanceof DataplaneUpdate.ConfigUpdate || u instanceof DataplaneUpdate.InSync;
    }

    /** {@return this node's name and IPv4 address}, from the model's IPv4 LOCAL_HOST route; empty without one. */
    public static Optional<RouteUpdate> localHost(DataplaneModel model) {
        return model.routes().values().stream()
                .filter(r -> r.type() == RouteType.LOCAL_HOST && r.dstNodeIp() != null && !r.dst().contains(":"))
                .findFirst();
    }

    /**
     * {@return the plan}.
     *
     * @param localSubnet this node's underlay subnet (the prefix of its address on its interface),
     *                    empty when unknown: then no node counts as same-subnet
     */
    public static Plan plan(DataplaneModel model, Optional<Cidr> localSubnet) {
        Optional<RouteUpdate> self = localHost(model);
        if (self.isEmpty()) {
            return Plan.empty();
        }
        String hostname = self.get().dstNode();
        FelixSettings settings = model.config();
        Encapsulation encap = Encapsulation.of(model);
        boolean vxlanOn = encap.vxlan();
        boolean ipipOn = encap.ipip();

        VtepUpdate localVtep = model.vteps().get(hostname);
        Optional<VxlanDevice> device = vxlanOn && localVtep != null && localVtep.ipv4Addr() != null
                ? Optional.of(new VxlanDevice(settings.vxlanVni(), settings.vxlanPort(), localVtep.parentDeviceIpv4(),
                localVtep.mac(), localVtep.ipv4Addr()))
                : Optional.empty();
        Map<String, String> neighbours = new TreeMap<>();
        Map<String, String> fdb = new TreeMap<>();
        if (device.isPresent()) {
            for (VtepUpdate v : model.vteps().values()) {
                if (!v.node().equals(hostname) && v.ipv4Addr() != null) {
                    neighbours.put(v.ipv4Addr(), v.mac());
                    fdb.put(v.mac(), v.parentDeviceIpv4());
                }
            }
        }

        boolean byBlocks = settings.routesFromIpamBlocks();
        // Each node's remote blocks, parsed once (not once per workload route).
        Map<String, List<Cidr>> remoteBlocks = new HashMap<>();
        for (RouteUpdate r : model.routes().values()) {
            if (r.type() == RouteType.REMOTE_BLOCK && !r.dst().contains(":")) {
                Cidr.tryParse(r.dst()).ifPresent(c -> remoteBlocks.computeIfAbsent(r.dstNode(), n -> new ArrayList<>()).add(c));
            }
        }
        Map<String, Planned> routes = new TreeMap<>();
        for (RouteUpdate r : model.routes().values()) {
            if (r.dst().contains(":")) {
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
            Planned p = route(r, pool, sameSubnet, device.isPresent(), ipipOn, model.vteps().get(r.dstNode()));
            if (p != null) {
                routes.put(r.dst(), p);
            }
        }
        return new Plan(device, ipipOn, routes, neighbours, fdb);
    }

    private static Planned route(RouteUpdate r, IpPoolUpdate pool, boolean sameSubnet, boolean vxlanDevice,
                                 boolean ipipOn, VtepUpdate remoteVtep) {
        if (encapsulates(pool.vxlanMode(), sameSubnet)) {
            return vxlanDevice && remoteVtep != null && remoteVtep.ipv4Addr() != null
                    ? new Planned(r.dst(), Kind.VXLAN, remoteVtep.ipv4Addr()) : null;
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
