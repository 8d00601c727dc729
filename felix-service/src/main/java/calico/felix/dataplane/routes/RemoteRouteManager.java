package calico.felix.dataplane.routes;

import calico.api.net.Cidr;
import calico.dataplane.netlink.Address;
import calico.dataplane.netlink.FdbEntry;
import calico.dataplane.netlink.IpPrefix;
import calico.dataplane.netlink.Link;
import calico.dataplane.netlink.Neighbour;
import calico.dataplane.netlink.Netlink;
import calico.dataplane.netlink.NetlinkException;
import calico.dataplane.netlink.Route;
import calico.dataplane.netlink.Vxlan;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.IpFamily;
import java.net.InetAddress;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Programs what {@link RemoteRoutes} plans for one address family: the family's VXLAN device
 * ({@code vxlan.calico} or {@code vxlan-v6.calico}: settings, MTU, this node's tunnel address, up),
 * its permanent neighbour and FDB entries for the other nodes' VTEPs, and the routes to other
 * nodes' blocks and workloads (VXLAN, IPIP for IPv4, direct) and the blackholes for this node's
 * blocks, all with {@link RouteManager#PROTOCOL_FELIX}. One instance per family, same code.
 *
 * <p>Ownership: the main-table proto-80 routes of its family that have a gateway or are not
 * unicast (the shapes this manager programs); {@link RouteManager} owns the proto-80 device routes
 * to local workloads. Each resync deletes only its own share. The device is Calico's: it is
 * deleted when VXLAN is off, and re-created when its VNI, port, parent, local address or MAC differ.
 *
 * <p>{@link #update} diffs the plan against what it programmed (one address dump to find this
 * node's underlay interface and subnet, one link lookup for the device); {@link #resync} first
 * reads routes, neighbours and FDB entries back from the kernel, so strangers' edits and a
 * restarted felix are repaired without a delete-then-add of what is right. Same threading as
 * {@link RouteManager}: one thread, the {@link Netlink}'s namespace.
 */
public final class RemoteRouteManager {

    private static final Logger log = LoggerFactory.getLogger(RemoteRouteManager.class);

    /** Counts from one update or resync. */
    public record Stats(int routesAdded, int routesDeleted, int neighboursSet, int neighboursDeleted, int fdbSet,
                        int fdbDeleted, boolean deviceCreated, boolean deviceDeleted) {
        /** {@return the routes, neighbours and FDB entries added or removed} */
        public int entriesChanged() {
            return routesAdded + routesDeleted + neighboursSet + neighboursDeleted + fdbSet + fdbDeleted;
        }
    }

    /**
     * What identifies a route for comparison (the kernel adds scope, table and metric details; it
     * reports an IPv6 blackhole on {@code lo}, so a route that is not unicast has no interface here).
     */
    private record Shape(IpPrefix dst, Route.Type type, Optional<InetAddress> gateway, int linkIndex, boolean onlink) {
        static Shape of(Route r) {
            return new Shape(r.destination(), r.type(), r.gateway(), r.type() == Route.Type.UNICAST ? r.linkIndex() : 0,
                    r.onlink());
        }
    }

    private final Netlink netlink;
    private final DataplaneModel model;
    private final IpFamily family;
    /** The family's VXLAN device name. */
    private final String device;
    private final IntSupplier vxlanMtu;
    /** {@code tunl0}'s MTU now ({@code Mtus.ipip()}); IPv4 only. */
    private final IntSupplier ipipMtu;
    private final Map<IpPrefix, Route> routes = new HashMap<>();
    private final Map<InetAddress, String> neighbours = new HashMap<>();
    private final Map<String, InetAddress> fdb = new HashMap<>();
    private final Set<String> warned = new HashSet<>();
    private Plan last = null;
    /** True during {@link #resync}: look at {@code tunl0} even if IPIP was off. */
    private boolean resyncing;
    /** The VXLAN device's ifindex as last seen, 0 for none: its routes go with it. */
    private int deviceIndex;
    private int added;
    private int deleted;
    private int neighSet;
    private int neighDeleted;
    private int fdbSet;
    private int fdbDeleted;
    private boolean created;
    private boolean removed;

    /** The plan and the kernel facts it was made with. */
    private record Plan(RemoteRoutes.Plan plan, int parentIndex) {
    }

    /**
     * @param netlink  acts on the namespace to program
     * @param model    the dataplane's model (read only; its owner folds batches in before {@link #update})
     * @param vxlanMtu the VXLAN device's MTU now: {@code Mtus.vxlan()} (vxlanMTU, else the host MTU less 50); asked
     *                 at every update, so a changed host MTU is set in place by the next one
     */
    public RemoteRouteManager(Netlink netlink, DataplaneModel model, IntSupplier vxlanMtu) {
        this(netlink, model, IpFamily.V4, vxlanMtu);
    }

    /**
     * @param family   the family whose routes and VXLAN device this manager owns
     * @param vxlanMtu that family's VXLAN device MTU now ({@code Mtus.vxlan()} or {@code Mtus.vxlanV6()})
     */
    public RemoteRouteManager(Netlink netlink, DataplaneModel model, IpFamily family, IntSupplier vxlanMtu) {
        this(netlink, model, family, vxlanMtu, () -> 0);
    }

    /**
     * As above, with {@code tunl0}'s MTU now ({@code Mtus.ipip()}: ipipMTU, else the host MTU less 20;
     * 0 leaves the MTU as it is); the IPv4 manager sets it and this node's IPIP tunnel address on
     * {@code tunl0} while IPIP is on.
     */
    public RemoteRouteManager(Netlink netlink, DataplaneModel model, IpFamily family, IntSupplier vxlanMtu,
                              IntSupplier ipipMtu) {
        this.ipipMtu = Objects.requireNonNull(ipipMtu, "ipipMtu");
        this.netlink = Objects.requireNonNull(netlink, "netlink");
        this.model = Objects.requireNonNull(model, "model");
        this.family = Objects.requireNonNull(family, "family");
        this.device = RemoteRoutes.vxlanDevice(family);
        this.vxlanMtu = Objects.requireNonNull(vxlanMtu, "vxlanMtu");
    }

    /** {@return the family this manager programs} */
    public IpFamily family() {
        return family;
    }

    /** Brings the kernel up to the model, from what this manager remembers programming. */
    public Stats update() {
        reset();
        Plan p = plan();
        program(p);
        last = p;
        return stats();
    }

    /** Reads this manager's share of the kernel back first, then programs as {@link #update} does. */
    public Stats resync() {
        reset();
        resyncing = true;
        routes.clear();
        for (Route r : netlink.routes(Route.TABLE_MAIN)) {
            if (r.protocol() == RouteManager.PROTOCOL_FELIX && (r.gateway().isPresent() || r.type() != Route.Type.UNICAST)
                    && ofFamily(r.destination().address())) {
                routes.put(r.destination(), r);
            }
        }
        readDeviceEntries();
        Plan p = plan();
        try {
            program(p);
        } finally {
            resyncing = false;
        }
        last = p;
        return stats();
    }

    /** {@return the last plan programmed}, for tests and the admin API; empty before the first update. */
    public Optional<RemoteRoutes.Plan> lastPlan() {
        return Optional.ofNullable(last).map(Plan::plan);
    }

    private Plan plan() {
        Optional<Cidr> subnet = Optional.empty();
        int parentIndex = 0;
        var self = RemoteRoutes.localHost(model, family);
        if (self.isPresent()) {
            String ip = self.get().dstNodeIp();
            for (Address a : netlink.addresses()) {
                if (ofFamily(a.prefix().address()) && a.prefix().address().equals(ip(ip))) {
                    parentIndex = a.linkIndex();
                    subnet = Cidr.tryParse(ip + "/" + a.prefix().length()).map(Cidr::network);
                    break;
                }
            }
        }
        return new Plan(RemoteRoutes.plan(model, family, subnet), parentIndex);
    }

    private void program(Plan p) {
        int vxlanIndex = device(p);
        Map<IpPrefix, Route> desired = new HashMap<>();
        int tunl0 = family == IpFamily.V4 ? ipipDevice(p.plan()) : 0;
        for (RemoteRoutes.Planned r : p.plan().routes().values()) {
            IpPrefix dst = IpPrefix.parse(r.dst());
            Route route = switch (r.kind()) {
                case BLACKHOLE -> Route.blackhole(dst);
                case VXLAN -> vxlanIndex > 0 ? Route.via(dst, ip(r.gateway()), vxlanIndex).withOnlink() : null;
                case DIRECT -> Route.via(dst, ip(r.gateway()), p.parentIndex());
                case IPIP -> tunl0 > 0 ? Route.via(dst, ip(r.gateway()), tunl0).withOnlink() : null;
            };
            if (route != null) {
                desired.put(dst, route.withProtocol(RouteManager.PROTOCOL_FELIX));
            }
        }
        for (var it = routes.entrySet().iterator(); it.hasNext(); ) {
            var e = it.next();
            Route want = desired.get(e.getKey());
            if (want == null || !Shape.of(want).equals(Shape.of(e.getValue()))) {
                deleteRoute(e.getValue());
                it.remove();
            }
        }
        for (Route want : desired.values()) {
            if (!routes.containsKey(want.destination())) {
                netlink.replaceRoute(want);
                routes.put(want.destination(), want);
                added++;
            }
        }
    }

    /** Creates, repairs or deletes the VXLAN device and its entries; {@return its ifindex}, 0 when there is none. */
    private int device(Plan p) {
        Optional<RemoteRoutes.VxlanDevice> want = p.plan().vxlan();
        Optional<Link> link = netlink.link(device);
        link.ifPresent(l -> deviceIndex = l.index());
        if (want.isEmpty() || p.parentIndex() == 0) {
            if (want.isPresent()) {
                warnOnce("no-parent", "VXLAN is on but no interface holds this node's address; no VXLAN device yet");
            }
            if (link.isPresent()) {
                netlink.deleteLink(device);
                removed = true;
                forgetDevice();
            }
            return 0;
        }
        RemoteRoutes.VxlanDevice d = want.get();
        int mtu = vxlanMtu.getAsInt();
        Vxlan wanted = new Vxlan(device, d.vni(), d.port(), p.parentIndex(),
                Optional.of(ip(d.parentAddress())), Optional.of(d.mac()), mtu);
        Optional<Vxlan> have = link.isPresent() ? netlink.vxlan(device) : Optional.empty();
        if (link.isPresent() && (have.isEmpty() || !sameIdentity(have.get(), wanted))) {
            log.info("Re-creating {}: it is {} and should be {}", device, have.orElse(null), wanted);
            netlink.deleteLink(device);
            removed = true;
            forgetDevice();
            have = Optional.empty();
        }
        if (have.isEmpty()) {
            netlink.addVxlan(wanted);
            created = true;
            forgetDevice();
        } else if (have.get().mtu() != mtu) {
            netlink.setLinkMtu(device, mtu);
        }
        Link now = netlink.link(device).orElseThrow(
                () -> new NetlinkException("find link " + device, calico.dataplane.netlink.Errno.ENODEV, null));
        int index = now.index();
        deviceIndex = index;
        IpPrefix tunnel = IpPrefix.parse(d.tunnelAddress() + "/" + RemoteRoutes.hostPrefixLength(family));
        boolean hasTunnel = false;
        for (Address a : netlink.addresses(index)) {
            if (a.prefix().equals(tunnel)) {
                hasTunnel = true;
            } else if (ofFamily(a.prefix().address()) && !a.prefix().address().isLinkLocalAddress()) {
                // the kernel's IPv6 link-local address stays: neighbour discovery on the device uses it
                netlink.deleteAddress(index, a.prefix());
            }
        }
        if (!hasTunnel) {
            netlink.addAddress(index, tunnel);
        }
        if (!now.up()) {
            netlink.setLinkUp(device, true);
        }
        entries(index, p.plan());
        return index;
    }

    private static boolean sameIdentity(Vxlan have, Vxlan want) {
        return have.vni() == want.vni() && have.port() == want.port() && have.parentIndex() == want.parentIndex()
                && have.local().equals(want.local()) && have.mac().equals(want.mac());
    }

    /** Neighbour and FDB entries for the other nodes' VTEPs, diffed against what was programmed. */
    private void entries(int index, RemoteRoutes.Plan plan) {
        Map<InetAddress, String> wantNeigh = new TreeMap<>(java.util.Comparator.comparing(InetAddress::getHostAddress));
        plan.neighbours().forEach((tunnelIp, mac) -> wantNeigh.put(ip(tunnelIp), mac));
        Map<String, InetAddress> wantFdb = new TreeMap<>();
        plan.fdb().forEach((mac, nodeIp) -> wantFdb.put(mac, ip(nodeIp)));
        int[] n = sync(neighbours, wantNeigh, (ip, mac) -> netlink.setPermanentNeighbour(index, ip, mac),
                (ip, mac) -> ignoreMissing(() -> netlink.deleteNeighbour(index, ip)));
        neighSet += n[0];
        neighDeleted += n[1];
        int[] f = sync(fdb, wantFdb, (mac, nodeIp) -> netlink.setFdb(index, mac, nodeIp),
                (mac, nodeIp) -> ignoreMissing(() -> netlink.deleteFdb(index, mac, nodeIp)));
        fdbSet += f[0];
        fdbDeleted += f[1];
    }

    /**
     * Makes {@code programmed} equal {@code want}: deletes entries that went or changed, then sets
     * the missing and changed ones; {@return {set, deleted}}.
     */
    private static <K, V> int[] sync(Map<K, V> programmed, Map<K, V> want, java.util.function.BiConsumer<K, V> set,
                                     java.util.function.BiConsumer<K, V> delete) {
        int[] counts = new int[2];
        for (var it = programmed.entrySet().iterator(); it.hasNext(); ) {
            var e = it.next();
            if (!e.getValue().equals(want.get(e.getKey()))) {
                delete.accept(e.getKey(), e.getValue());
                it.remove();
                counts[1]++;
            }
        }
        for (var e : want.entrySet()) {
            if (!e.getValue().equals(programmed.get(e.getKey()))) {
                set.accept(e.getKey(), e.getValue());
                programmed.put(e.getKey(), e.getValue());
                counts[0]++;
            }
        }
        return counts;
    }

    /**
     * Brings {@code tunl0} to the plan ({@link RemoteRoutes#tunl0}: up, MTU, this node's tunnel address
     * while IPIP is on; no IPv4 address while it is off, looked at only when it was on or on a resync);
     * {@return its ifindex} while IPIP is on, 0 when off or the kernel has none (no {@code ipip} module).
     */
    private int ipipDevice(RemoteRoutes.Plan plan) {
        boolean wasOn = last == null || last.plan().ipip() || resyncing;
        if (!plan.ipip() && !wasOn) {
            return 0;
        }
        Optional<Link> l = netlink.link(RemoteRoutes.IPIP_DEVICE);
        if (l.isEmpty() && plan.ipip()) {
            try {
                netlink.addIpip(RemoteRoutes.IPIP_DEVICE); // loads the ipip module where the kernel has one
            } catch (NetlinkException e) {
                if (e.errno() != calico.dataplane.netlink.Errno.EEXIST) {
                    warnOnce("no-tunl0", "IPIP is on but " + RemoteRoutes.IPIP_DEVICE + " cannot be created ("
                            + e.getMessage() + "; no ipip module in this kernel?); IPIP routes are not programmed");
                }
            }
            l = netlink.link(RemoteRoutes.IPIP_DEVICE);
        }
        if (l.isEmpty()) {
            return 0;
        }
        int index = l.get().index();
        java.util.List<String> have = new java.util.ArrayList<>();
        for (Address a : netlink.addresses(index)) {
            if (a.prefix().address().getAddress().length == 4) {
                have.add(a.prefix().address().getHostAddress() + "/" + a.prefix().length());
            }
        }
        int mtu = ipipMtu.getAsInt();
        RemoteRoutes.Tunl0Changes c = RemoteRoutes.tunl0(plan, have, l.get().mtu(), l.get().up(),
                mtu == 0 ? l.get().mtu() : mtu);
        for (String a : c.delete()) {
            ignoreMissing(() -> netlink.deleteAddress(index, IpPrefix.parse(a)));
        }
        c.mtu().ifPresent(m -> netlink.setLinkMtu(RemoteRoutes.IPIP_DEVICE, m));
        for (String a : c.add()) {
            netlink.addAddress(index, IpPrefix.parse(a));
        }
        if (c.up()) {
            netlink.setLinkUp(RemoteRoutes.IPIP_DEVICE, true);
        }
        return plan.ipip() ? index : 0;
    }

    private void readDeviceEntries() {
        neighbours.clear();
        fdb.clear();
        Optional<Link> l = netlink.link(device);
        if (l.isEmpty()) {
            return;
        }
        for (Neighbour n : netlink.neighbours(l.get().index())) {
            if (n.permanent() && n.mac().isPresent() && ofFamily(n.address())) {
                neighbours.put(n.address(), n.mac().get());
            }
        }
        for (FdbEntry e : netlink.fdb(l.get().index())) {
            if (e.permanent()) {
                fdb.put(e.mac(), e.destination());
            }
        }
    }

    /** The device went (or is new): its neighbours, FDB entries and routes went with it. */
    private void forgetDevice() {
        neighbours.clear();
        fdb.clear();
        int gone = deviceIndex;
        routes.values().removeIf(r -> gone != 0 && r.linkIndex() == gone);
        deviceIndex = 0;
    }

    private void deleteRoute(Route r) {
        ignoreMissing(() -> netlink.deleteRoute(r));
        deleted++;
    }

    private static void ignoreMissing(Runnable op) {
        try {
            op.run();
        } catch (NetlinkException e) {
            if (!e.notFound() && e.errno() != calico.dataplane.netlink.Errno.ENODEV) {
                throw e;
            }
        }
    }

    private void warnOnce(String key, String message) {
        if (warned.add(key)) {
            log.warn(message);
        }
    }

    private boolean ofFamily(InetAddress a) {
        return a.getAddress().length == (family == IpFamily.V4 ? 4 : 16);
    }

    /** An address of this family, or (an FDB destination, a node address) of either. */
    private static InetAddress ip(String text) {
        return IpPrefix.parse(text + "/" + RemoteRoutes.hostPrefixLength(IpFamily.of(text))).address();
    }

    private void reset() {
        added = 0;
        deleted = 0;
        neighSet = 0;
        neighDeleted = 0;
        fdbSet = 0;
        fdbDeleted = 0;
        created = false;
        removed = false;
    }

    private Stats stats() {
        return new Stats(added, deleted, neighSet, neighDeleted, fdbSet, fdbDeleted, created, removed);
    }
}
