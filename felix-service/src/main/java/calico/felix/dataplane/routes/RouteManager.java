package calico.felix.dataplane.routes;

import calico.dataplane.netlink.IpPrefix;
import calico.dataplane.netlink.Link;
import calico.dataplane.netlink.LinkUpdate;
import calico.dataplane.netlink.Netlink;
import calico.dataplane.netlink.NetlinkException;
import calico.dataplane.netlink.Route;
import calico.dataplane.netlink.Sysctls;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.FelixSettings;
import calico.felix.dataplane.rules.DataplaneModel;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Programs the host side of local workloads as Calico's CNI plugin expects felix to: for each
 * local workload endpoint, {@code <net> dev <interface> scope link proto 80} in the main table
 * (IPv4 and IPv6), and on its host-side interface the link up plus {@code proxy_arp=1},
 * {@code proxy_delay=0}, {@code forwarding=1}, {@code rp_filter=1}, {@code route_localnet=1}
 * (IPv4) and {@code forwarding=1} (IPv6). See {@code felix-service/design/routes.md}.
 *
 * <p>Ownership: every route it adds carries {@link #PROTOCOL_FELIX}; it only ever deletes routes
 * with that protocol that are unicast device routes (no gateway), so routes installed by anyone
 * else survive, and so do {@link RemoteRouteManager}'s (gateways and blackholes, also proto 80).
 *
 * <p>It reads the dataplane's one {@link DataplaneModel}, like every other consumer: the local
 * workload endpoints the model holds (so an endpoint the model skipped as a protocol violation is
 * not routed either) and the model's {@code interfacePrefix}. Built with the dataplane's model,
 * its owner folds each batch in and then calls {@link #update}; built without one, it keeps a
 * model of its own that {@link #apply} folds batches into (tests and tools).
 *
 * <p>Single-threaded: call everything from one thread, the thread in the network namespace the
 * {@link Netlink} was built in ({@link Sysctls} acts on the calling thread's namespace), which is
 * also the model's writer. {@link #update} is incremental (it looks only at interfaces whose
 * endpoints changed since the last one, by identity of the model's endpoint objects, and at pending
 * ones); {@link #resync} compares everything with the kernel.
 */
public final class RouteManager {

    /** Calico's {@code RTPROT_FELIX}: marks routes this manager owns. */
    public static final int PROTOCOL_FELIX = 80;

    private static final Logger log = LoggerFactory.getLogger(RouteManager.class);

    /** A local endpoint as far as routing cares. */
    private record Endpoint(String interfaceName, List<IpPrefix> nets) {
    }

    /** A route we put in the kernel: its interface by name and by the index it had then. */
    private record Programmed(String interfaceName, int linkIndex) {
    }

    /** Counts from one apply or resync, for logs and metrics. */
    public record Stats(int routesAdded, int routesDeleted, int interfacesConfigured, int pendingInterfaces,
                        int failures) {
    }

    private final Netlink netlink;
    private final Sysctls sysctls;
    /** The dataplane's model (read only) or, with {@link #ownsModel}, this manager's own. */
    private final DataplaneModel model;
    private final boolean ownsModel;
    /** The model's endpoint objects as the last update saw them (valid or not): "changed" is {@code !=}. */
    private final Map<String, DataplaneUpdate.WorkloadEndpointUpdate> seen = new HashMap<>();
    /** Whether the model's InSync has been acted on (one resync). */
    private boolean sawInSync;
    /** The routable form of each endpoint seen valid (an invalid update keeps the previous form). */
    private final Map<String, Endpoint> endpoints = new TreeMap<>();
    private final Map<IpPrefix, Programmed> programmed = new HashMap<>();
    /** Interfaces whose link and sysctls are set, with the index they had (a new index = a new link). */
    private final Map<String, Integer> configured = new HashMap<>();
    /** Needed interfaces that do not exist (yet). */
    private final Set<String> pending = new TreeSet<>();
    /** Interfaces whose programming failed; retried on the next apply. */
    private final Set<String> failed = new TreeSet<>();
    /** Interfaces the policy driver holds down (it cannot police them): configured, never set up by us. */
    private Set<String> heldDown = Set.of();
    /** The workload interface prefixes ({@code interfacePrefix}): only interfaces matching one are routed. */
    private FelixSettings settings = FelixSettings.defaults();

    private int added;
    private int deleted;
    private int ifacesConfigured;
    private int failures;
    private final Timings timings;

    /**
     * How long the kernel work took (Calico's {@code felix_route_table_*} summaries); called on the caller's thread.
     *
     * @param listed          the main table was listed
     * @param interfaceSynced one interface's routes (and its configuration) were brought in line
     */
    public record Timings(java.util.function.Consumer<java.time.Duration> listed,
                          java.util.function.Consumer<java.time.Duration> interfaceSynced) {
        public static final Timings NONE = new Timings(took -> { }, took -> { });
    }

    /** A manager with a model of its own, which {@link #apply} folds batches into (tests, tools). */
    public RouteManager(Netlink netlink, Sysctls sysctls) {
        this(netlink, sysctls, new DataplaneModel(), true, Timings.NONE);
    }

    /** A manager reading the dataplane's {@code model}: its owner folds each batch in, then calls {@link #update}. */
    public RouteManager(Netlink netlink, Sysctls sysctls, DataplaneModel model) {
        this(netlink, sysctls, model, false, Timings.NONE);
    }

    /** As above, telling {@code timings} how long listing and each interface's sync took. */
    public RouteManager(Netlink netlink, Sysctls sysctls, DataplaneModel model, Timings timings) {
        this(netlink, sysctls, model, false, timings);
    }

    private RouteManager(Netlink netlink, Sysctls sysctls, DataplaneModel model, boolean ownsModel, Timings timings) {
        this.netlink = Objects.requireNonNull(netlink, "netlink");
        this.sysctls = Objects.requireNonNull(sysctls, "sysctls");
        this.model = Objects.requireNonNull(model, "model");
        this.ownsModel = ownsModel;
        this.timings = Objects.requireNonNull(timings, "timings");
    }

    /**
     * Folds one batch into this manager's own model, then {@link #update}s from it. Only for a
     * manager built without the dataplane's model (whose owner folds the batches).
     */
    public Stats apply(List<DataplaneUpdate> batch) {
        if (!ownsModel) {
            throw new IllegalStateException("this route manager reads the dataplane's model: fold the batch "
                    + "into it and call update()");
        }
        model.apply(batch);
        return update();
    }

    /**
     * Brings the routes up to the model: the endpoints that changed since the last update, then
     * routes for the interfaces they touch and for every pending interface. The model's first
     * {@code InSync} triggers a {@link #resync} instead. An endpoint whose interface name or nets
     * are unusable is not taken (its previous form, if any, stays): the others are programmed,
     * then an {@link IllegalArgumentException} names the endpoint and the field (once per such
     * update of it).
     *
     * <p>The model's routes ({@code RouteUpdate}) are not read on purpose: local workload routes
     * come from the endpoints themselves (they carry the interface), and remote workloads need BGP
     * or encapsulation, which are not built yet.
     */
    public Stats update() {
        Map<String, Endpoint> changes = new LinkedHashMap<>();
        List<String> refused = new ArrayList<>();
        Map<String, DataplaneUpdate.WorkloadEndpointUpdate> now = model.workloads();
        for (Map.Entry<String, DataplaneUpdate.WorkloadEndpointUpdate> e : now.entrySet()) {
            DataplaneUpdate.WorkloadEndpointUpdate w = e.getValue();
            if (seen.put(e.getKey(), w) == w) {
                continue;
            }
            try {
                changes.put(e.getKey(), endpoint(w));
            } catch (IllegalArgumentException bad) {
                refused.add(bad.getMessage());
            }
        }
        if (seen.size() > now.size()) {
            seen.keySet().removeIf(id -> {
                if (now.containsKey(id)) {
                    return false;
                }
                changes.put(id, null);
                return true;
            });
        }
        boolean inSync = model.inSync() && !sawInSync;
        sawInSync = model.inSync();
        Stats stats = applyChanges(changes, model.config(), inSync);
        if (!refused.isEmpty()) {
            throw new IllegalArgumentException(String.join("; ", refused));
        }
        return stats;
    }

    private Stats applyChanges(Map<String, Endpoint> changes, FelixSettings config, boolean inSync) {
        Set<String> touched = new TreeSet<>();
        if (!config.interfacePrefixes().equals(settings.interfacePrefixes())) {
            // Which interfaces are workload interfaces changed: every endpoint is looked at again.
            endpoints.values().forEach(ep -> touched.add(ep.interfaceName()));
        }
        settings = config;
        changes.forEach((id, ep) -> {
            Endpoint old = ep == null ? endpoints.remove(id) : endpoints.put(id, ep);
            if (old != null) {
                touched.add(old.interfaceName());
            }
            if (ep != null) {
                touched.add(ep.interfaceName());
                if (!settings.isWorkloadInterface(ep.interfaceName())) {
                    log.warn("workload endpoint {}: interface {} matches no interfacePrefix {}: not routed", id,
                            ep.interfaceName(), String.join(",", settings.interfacePrefixes()));
                }
            }
        });
        if (inSync) {
            return resync();
        }
        resetCounts();
        Map<IpPrefix, String> desired = desired();
        deleteUndesired(desired);
        touched.addAll(pending);
        touched.addAll(failed);
        Set<String> needed = new HashSet<>(desired.values());
        pending.retainAll(needed);
        failed.retainAll(needed);
        for (String iface : touched) {
            if (!needed.contains(iface)) {
                configured.remove(iface);
            }
        }
        touched.retainAll(needed);
        Map<String, Link> dumped = touched.size() > LOOKUPS_BEFORE_DUMP ? dumpLinks() : null;
        for (String iface : touched) {
            Link link;
            try {
                link = dumped != null ? dumped.get(iface) : netlink.link(iface).orElse(null);
            } catch (NetlinkException e) {
                fail(iface, e);
                continue;
            }
            program(iface, link, desired);
        }
        return stats();
    }

    /**
     * Above this many interfaces to look up in one apply, one link dump answers them all: every
     * batch looks up each pending interface again (invariant 5), and 500 endpoints whose veths do
     * not exist cost 500 {@code RTM_GETLINK}s, ~18 ms, on every policy edit.
     */
    static final int LOOKUPS_BEFORE_DUMP = 8;

    /** {@return every link of the namespace by name}, or null when the dump fails (then each is looked up alone). */
    private Map<String, Link> dumpLinks() {
        try {
            Map<String, Link> links = new HashMap<>();
            for (Link l : netlink.links()) {
                links.put(l.name(), l);
            }
            return links;
        } catch (NetlinkException e) {
            log.debug("link dump failed, looking interfaces up one by one: {}", e.getMessage());
            return null;
        }
    }

    /**
     * Compares everything with the kernel: configures every needed interface that exists (again,
     * if it was re-created), adds missing routes, and deletes every main-table unicast device route
     * with {@link #PROTOCOL_FELIX} that is not desired. Routes with other protocols, and proto-80
     * routes with a gateway or of another type ({@link RemoteRouteManager}'s), are never touched.
     *
     * <p>Before the model is in sync it deletes nothing: a restarted felix that cannot reach its
     * datastore (typha down) knows no endpoint yet, and every workload route would look undesired
     * (the periodic refresh removed a node's pod routes that way). It still adds and configures what
     * the endpoints it knows need; the first resync in sync removes what is stale.
     */
    public Stats resync() {
        resetCounts();
        boolean mayDelete = model.inSync();
        Map<IpPrefix, String> desired = desired();
        Map<String, Link> links = new HashMap<>();
        for (Link l : netlink.links()) {
            links.put(l.name(), l);
        }
        // What the kernel holds, not what we remember: someone may have added or removed routes.
        programmed.clear();
        Map<Integer, String> names = new HashMap<>();
        links.values().forEach(l -> names.put(l.index(), l.name()));
        long listStart = System.nanoTime();
        List<Route> mainTable = netlink.routes(Route.TABLE_MAIN);
        timings.listed().accept(java.time.Duration.ofNanos(System.nanoTime() - listStart));
        for (Route r : mainTable) {
            if (r.protocol() != PROTOCOL_FELIX && mayDelete && isExternalWorkloadRoute(r, names.get(r.linkIndex()), desired)) {
                delete(r);
                continue;
            }
            if (r.protocol() != PROTOCOL_FELIX || r.gateway().isPresent() || r.type() != Route.Type.UNICAST) {
                continue; // not ours: others' protocols, and RemoteRouteManager's share (gateways, blackholes)
            }
            String want = desired.get(r.destination());
            Link link = want == null ? null : links.get(want);
            // Kept even if we have not configured the link yet (a restarted felix): configuring
            // it below re-asserts the route with a replace, never a delete-then-add.
            if (link != null && link.index() == r.linkIndex() && r.gateway().isEmpty()) {
                programmed.put(r.destination(), new Programmed(want, link.index()));
            } else if (mayDelete) {
                delete(r);
            }
        }
        Set<String> needed = new TreeSet<>(desired.values());
        pending.retainAll(needed);
        failed.retainAll(needed);
        configured.keySet().retainAll(needed);
        for (String iface : needed) {
            program(iface, links.get(iface), desired);
        }
        return stats();
    }

    /**
     * {@code removeExternalRoutes} (Calico's default: on): a route someone else added (another protocol) through a
     * workload interface, to a destination felix does not route there, goes at a resync. Routes the kernel makes
     * itself (IPv6 link-local, proto kernel) and any route on other interfaces stay; a desired destination is
     * taken over by felix's replace instead.
     */
    private boolean isExternalWorkloadRoute(Route r, String linkName, Map<IpPrefix, String> desired) {
        FelixSettings s = model.config();
        return s.removeExternalRoutes() && linkName != null && s.isWorkloadInterface(linkName)
                && r.protocol() != Route.PROTOCOL_KERNEL && r.type() == Route.Type.UNICAST && r.gateway().isEmpty()
                && !linkName.equals(desired.get(r.destination()));
    }

    /**
     * Reacts to one link announcement at once, without waiting for the next apply or resync: an
     * interface a local endpoint needs that appeared, was re-created (new index) or came up is
     * configured and gets its missing routes now; one that vanished is pending again; one an
     * administrator set down has lost its routes in the kernel (it flushes them), so they are
     * forgotten and re-added when it comes up. Interfaces no endpoint needs are ignored.
     */
    public Stats onLinkUpdate(LinkUpdate u) {
        resetCounts();
        String iface = u.name();
        Map<IpPrefix, String> desired = desired();
        if (!desired.containsValue(iface)) {
            return stats();
        }
        Integer had = configured.get(iface);
        boolean known = had != null && had == u.index() && !pending.contains(iface) && !failed.contains(iface);
        if (u.deleted()) {
            if (had == null || had == u.index()) {
                forget(iface);
                if (pending.add(iface)) {
                    log.info("interface {} vanished; its routes wait for it to come back", iface);
                }
            }
            return stats();
        }
        if (!u.up() && known) {
            programmed.values().removeIf(p -> p.interfaceName().equals(iface));
            return stats();
        }
        Link link;
        try {
            link = netlink.link(iface).orElse(null);
        } catch (NetlinkException e) {
            fail(iface, e);
            return stats();
        }
        program(iface, link, desired);
        return stats();
    }

    /** {@return the interfaces local endpoints name that do not exist (yet)}, for health and metrics. */
    public Set<String> pendingInterfaces() {
        return Set.copyOf(pending);
    }

    /** {@return the routes this manager believes it has programmed}, destination to interface. */
    public Map<String, String> programmedRoutes() {
        Map<String, String> out = new TreeMap<>();
        programmed.forEach((dst, p) -> out.put(dst.toString(), p.interfaceName()));
        return out;
    }

    // ------------------------------------------------------------------ internals

    private void program(String iface, Link link, Map<IpPrefix, String> desired) {
        long start = System.nanoTime();
        try {
            sync(iface, link, desired);
        } finally {
            timings.interfaceSynced().accept(java.time.Duration.ofNanos(System.nanoTime() - start));
        }
    }

    private void sync(String iface, Link link, Map<IpPrefix, String> desired) {
        if (link == null) {
            if (pending.add(iface)) {
                log.info("interface {} does not exist yet; its routes wait for it", iface);
            }
            forget(iface); // routes on a vanished interface went with it
            return;
        }
        pending.remove(iface);
        try {
            Integer had = configured.get(iface);
            if (had == null || had != link.index()) {
                configure(iface, link);
                // A new index is a new link: whatever we had on the old one is gone.
                programmed.values().removeIf(p -> p.interfaceName().equals(iface));
                configured.put(iface, link.index());
                ifacesConfigured++;
            }
            for (Map.Entry<IpPrefix, String> e : desired.entrySet()) {
                if (!e.getValue().equals(iface)) {
                    continue;
                }
                Programmed p = programmed.get(e.getKey());
                if (p != null && p.linkIndex() == link.index()) {
                    continue;
                }
                // Replace, not add: the destination belongs to this workload even if a stale
                // route of ours points it elsewhere.
                netlink.replaceRoute(Route.device(e.getKey(), link.index()).withProtocol(PROTOCOL_FELIX));
                programmed.put(e.getKey(), new Programmed(iface, link.index()));
                added++;
            }
            failed.remove(iface);
        } catch (NetlinkException | UncheckedIOException e) {
            // Most likely the interface vanished half-way: retry on the next apply.
            configured.remove(iface);
            fail(iface, e);
        }
    }

    private void forget(String iface) {
        configured.remove(iface);
        programmed.values().removeIf(p -> p.interfaceName().equals(iface));
    }

    /** The interfaces the policy driver holds down (fail closed): {@link #update} configures but never sets them up. */
    public void holdDown(Set<String> interfaces) {
        heldDown = Set.copyOf(interfaces);
    }

    private void configure(String iface, Link link) {
        if (!link.up() && !heldDown.contains(iface)) {
            netlink.setLinkUp(iface, true);
        }
        sysctls.setProxyArp(iface, true);
        sysctls.setProxyDelay(iface, 0);
        sysctls.setIpv4Forwarding(iface, true);
        sysctls.setRpFilter(iface, 1);
        sysctls.setRouteLocalnet(iface, true);
        try {
            sysctls.setIpv6Forwarding(iface, true);
        } catch (UncheckedIOException e) {
            // IPv6 disabled on this host or interface: IPv4 still works.
            log.debug("interface {}: no IPv6 forwarding sysctl: {}", iface, e.getMessage());
        }
    }

    private void deleteUndesired(Map<IpPrefix, String> desired) {
        List<IpPrefix> gone = new ArrayList<>();
        programmed.forEach((dst, p) -> {
            if (!p.interfaceName().equals(desired.get(dst))) {
                gone.add(dst);
            }
        });
        for (IpPrefix dst : gone) {
            Programmed p = programmed.remove(dst);
            delete(Route.device(dst, p.linkIndex()).withProtocol(PROTOCOL_FELIX));
        }
    }

    private void delete(Route r) {
        try {
            netlink.deleteRoute(r);
            deleted++;
        } catch (NetlinkException e) {
            // Absent already, or its interface is gone (and the route with it): both are the goal.
            if (!e.notFound() && !"ENODEV".equals(e.errnoName())) {
                failures++;
                log.warn("cannot delete route {}: {}", r, e.getMessage());
            }
        }
    }

    /**
     * Destination to interface; two endpoints claiming one net: the first by id wins (logged).
     * Only workload interfaces (matching an {@code interfacePrefix}) are routed, as Calico's route
     * table manages only those.
     */
    private Map<IpPrefix, String> desired() {
        Map<IpPrefix, String> out = new HashMap<>();
        endpoints.forEach((id, ep) -> {
            if (!settings.isWorkloadInterface(ep.interfaceName())) {
                return;
            }
            for (IpPrefix net : ep.nets()) {
                String prev = out.putIfAbsent(net, ep.interfaceName());
                if (prev != null && !prev.equals(ep.interfaceName())) {
                    log.warn("workload endpoint {}: {} is already routed to {}; ignoring it on {}", id, net, prev,
                            ep.interfaceName());
                }
            }
        });
        return out;
    }

    private static Endpoint endpoint(DataplaneUpdate.WorkloadEndpointUpdate w) {
        String iface = w.interfaceName();
        String where = "workload endpoint " + w.id() + ": interfaceName: ";
        if (iface == null || iface.isEmpty()) {
            throw new IllegalArgumentException(where + "is empty");
        }
        if (iface.length() > 15 || iface.contains("/") || iface.chars().anyMatch(Character::isWhitespace)) {
            throw new IllegalArgumentException(where + "'" + iface + "' is not a valid Linux interface name");
        }
        List<IpPrefix> nets = new ArrayList<>();
        for (String n : w.ipv4Nets()) {
            nets.add(net(w.id(), "ipv4Nets", n, true));
        }
        for (String n : w.ipv6Nets()) {
            nets.add(net(w.id(), "ipv6Nets", n, false));
        }
        return new Endpoint(iface, List.copyOf(nets));
    }

    private static IpPrefix net(String id, String field, String text, boolean v4) {
        IpPrefix p;
        try {
            p = IpPrefix.parse(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("workload endpoint " + id + ": " + field + ": " + e.getMessage(), e);
        }
        if (p.isIpv4() != v4) {
            throw new IllegalArgumentException("workload endpoint " + id + ": " + field + ": '" + text
                    + "' is not an IPv" + (v4 ? 4 : 6) + " net");
        }
        return p;
    }

    private void fail(String iface, RuntimeException e) {
        failures++;
        failed.add(iface);
        log.warn("interface {}: programming failed, retrying on the next apply: {}", iface, e.getMessage());
    }

    private void resetCounts() {
        added = 0;
        deleted = 0;
        ifacesConfigured = 0;
        failures = 0;
    }

    private Stats stats() {
        return new Stats(added, deleted, ifacesConfigured, pending.size(), failures);
    }
}
