package calico.felix.calc;

import calico.api.model.IPAMBlock;
import calico.api.model.Node;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.model.WorkloadEndpoint;
import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import calico.felix.calc.DataplaneUpdate.RouteRemove;
import calico.felix.calc.DataplaneUpdate.RouteType;
import calico.felix.calc.DataplaneUpdate.RouteUpdate;
import calico.libcalico.syncer.Update;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Routes to workloads and hosts, each annotated with the IP pool that contains it.
 *
 * <ul>
 *   <li>Every workload endpoint's {@code ipNetworks}: {@code LOCAL_WORKLOAD} (with its
 *       interface) when {@code spec.node} is this host, else {@code REMOTE_WORKLOAD} via that
 *       node and the node's address of the route's IP version (null until its Node is known).</li>
 *   <li>Every Node's {@code spec.bgp} addresses as /32 or /128: {@code LOCAL_HOST} for this
 *       host, {@code REMOTE_HOST} for the others.</li>
 *   <li>Every IPAM block with a host affinity ({@code spec.affinity: host:<node>}, not
 *       {@code deleted}): {@code LOCAL_BLOCK} for this host's blocks, {@code REMOTE_BLOCK} via
 *       the block's node and its address for the others (Calico's {@code routeSource:
 *       CalicoIPAM} routes; the dataplane chooses between these and the workload routes by
 *       {@code routeSource}, so the graph emits both whatever the setting).</li>
 *   <li>Pool annotation: the longest pool CIDR containing the route (ties: smallest pool name);
 *       the pool's encapsulation modes are the pool's ({@code IpPoolUpdate}), found by that name.</li>
 * </ul>
 *
 * <p>A destination claimed by several resources (two endpoints with one IP, or an endpoint
 * using a host's IP) is routed to one deterministic winner: the claimant whose key sorts first
 * ({@code Node(...)} before {@code WorkloadEndpoint(...)}, then by namespace/name). Each new
 * conflicting claim is logged once; when the winner goes, the next claimant takes the route.
 *
 * <p>Incremental: each input marks the destinations it can affect (an endpoint's nets; a node's
 * own addresses and its endpoints' nets; the claimed destinations inside a pool, found by a range
 * query), and only those are recomputed, each from current state alone. Blocks claim their CIDR
 * like endpoints claim their nets, so pools and node changes reach them the same way.
 */
public final class RouteCalculator {

    private static final Logger log = LoggerFactory.getLogger(RouteCalculator.class);

    /** Orders destinations by address then prefix, so a pool's contents are one contiguous range. */
    private static final Comparator<Cidr> BY_ADDRESS =
            Comparator.comparing(Cidr::address).thenComparingInt(Cidr::prefixLength);
    /** Claimant order; its first element owns the route. */
    private static final Comparator<ResourceKey> BY_KEY = Comparator.comparing(ResourceKey::toString);

    /** One endpoint's contribution: where it lives and what it claims. */
    private record Endpoint(String node, String interfaceName, Set<Cidr> nets) {
    }

    /** A node's addresses from its Node resource ({@code null} when unset or invalid). */
    private record NodeAddresses(IpAddress ipv4, IpAddress ipv6) {
        IpAddress of(int version) {
            return version == 4 ? ipv4 : ipv6;
        }
    }

    private record Pool(Cidr cidr, boolean natOutgoing) {
    }

    /** An affine IPAM block: its node and CIDR (network form). */
    private record Block(String node, Cidr cidr) {
    }

    private final String hostname;
    private final InfraListener out;
    /** Workload endpoints with a node and at least one parsable net. */
    private final Map<ResourceKey, Endpoint> endpoints = new HashMap<>();
    /** Endpoints by node, to re-route them when the node's address changes. */
    private final Map<String, Set<ResourceKey>> endpointsByNode = new HashMap<>();
    /** Affine, live IPAM blocks. */
    private final Map<ResourceKey, Block> blocks = new HashMap<>();
    /** Known nodes' addresses. */
    private final Map<String, NodeAddresses> nodes = new HashMap<>();
    /** Every claimed destination (network form) and who claims it; the index pools range over. */
    private final NavigableMap<Cidr, TreeSet<ResourceKey>> claims = new TreeMap<>(BY_ADDRESS);
    /** Valid pools by name. */
    private final Map<String, Pool> pools = new HashMap<>();
    /** Routes as last emitted, by destination text: no-op suppression and remove-only-after-add. */
    private final Map<String, RouteUpdate> sent = new HashMap<>();

    public RouteCalculator(String hostname, InfraListener out) {
        this.hostname = hostname;
        this.out = out;
    }

    public void registerWith(Dispatcher dispatcher) {
        dispatcher.register(ResourceKind.WORKLOAD_ENDPOINT, this::onEndpoint);
        dispatcher.register(ResourceKind.NODE, this::onNode);
        dispatcher.register(ResourceKind.IP_POOL, this::onPool);
        dispatcher.register(ResourceKind.IPAM_BLOCK, this::onBlock);
    }

    private void onBlock(Update update) {
        ResourceKey key = update.key();
        Block old = blocks.remove(key);
        Block now = update.value() instanceof IPAMBlock b ? toBlock(key, b) : null;
        if (now != null) {
            blocks.put(key, now);
        }
        Set<Cidr> before = old == null ? Set.of() : Set.of(old.cidr());
        Set<Cidr> after = now == null ? Set.of() : Set.of(now.cidr());
        reclaim(key, before, after);
        Set<Cidr> dirty = new LinkedHashSet<>(before);
        dirty.addAll(after); // the node may have changed under the same CIDR
        dirty.forEach(this::recompute);
    }

    private static Block toBlock(ResourceKey key, IPAMBlock b) {
        if (b.spec() == null || Boolean.TRUE.equals(b.spec().deleted())) {
            return null;
        }
        String node = b.spec().affineNode();
        if (node == null || node.isBlank()) {
            return null; // no host affinity: nobody to route it to
        }
        var cidr = Cidr.tryParse(b.spec().cidr());
        if (cidr.isEmpty()) {
            log.warn("{} spec.cidr \"{}\" is not a CIDR; no route for it", key, b.spec().cidr());
            return null;
        }
        return new Block(node, cidr.get().network());
    }

    private void onEndpoint(Update update) {
        ResourceKey key = update.key();
        Endpoint old = endpoints.remove(key);
        Endpoint now = update.value() instanceof WorkloadEndpoint wep && wep.spec() != null ? toEndpoint(key, wep) : null;
        if (old != null) {
            Set<ResourceKey> onNode = endpointsByNode.get(old.node());
            onNode.remove(key);
            if (onNode.isEmpty()) {
                endpointsByNode.remove(old.node());
            }
        }
        if (now != null) {
            endpoints.put(key, now);
            endpointsByNode.computeIfAbsent(now.node(), n -> new HashSet<>()).add(key);
        }
        Set<Cidr> before = old == null ? Set.of() : old.nets();
        Set<Cidr> after = now == null ? Set.of() : now.nets();
        reclaim(key, before, after);
        // Every net of either version: the node or interface may have changed under an unchanged claim.
        Set<Cidr> dirty = new LinkedHashSet<>(before);
        dirty.addAll(after);
        dirty.forEach(this::recompute);
    }

    private void onNode(Update update) {
        String name = update.key().name();
        NodeAddresses old = nodes.remove(name);
        NodeAddresses now = null;
        if (update.value() instanceof Node node) {
            var bgp = node.spec() == null ? null : node.spec().bgp();
            String v4 = bgp == null ? null : HostMetadataStage.bareAddress(name, "ipv4Address", bgp.ipv4Address(), 4);
            String v6 = bgp == null ? null : HostMetadataStage.bareAddress(name, "ipv6Address", bgp.ipv6Address(), 6);
            now = new NodeAddresses(v4 == null ? null : IpAddress.parse(v4), v6 == null ? null : IpAddress.parse(v6));
            nodes.put(name, now);
        }
        Set<Cidr> before = old == null ? Set.of() : hostDsts(old);
        Set<Cidr> after = now == null ? Set.of() : hostDsts(now);
        reclaim(update.key(), before, after);
        Set<Cidr> dirty = new LinkedHashSet<>(before);
        dirty.addAll(after);
        for (ResourceKey ep : endpointsByNode.getOrDefault(name, Set.of())) {
            dirty.addAll(endpoints.get(ep).nets());
        }
        for (Block b : blocks.values()) {
            if (b.node().equals(name)) {
                dirty.add(b.cidr());
            }
        }
        dirty.forEach(this::recompute);
    }

    private void onPool(Update update) {
        String name = update.key().name();
        Set<Cidr> dirty = new LinkedHashSet<>();
        Pool old = pools.remove(name);
        if (old != null) {
            dirty.addAll(claimedWithin(old.cidr()));
        }
        if (update.value() instanceof calico.api.model.IPPool pool) {
            DataplaneUpdate.IpPoolUpdate p = IpPoolStage.toUpdate(name, pool.spec());
            if (p != null) {
                Pool now = new Pool(Cidr.parse(p.cidr()), p.natOutgoing());
                pools.put(name, now);
                dirty.addAll(claimedWithin(now.cidr()));
            }
        }
        dirty.forEach(this::recompute);
    }

    private Endpoint toEndpoint(ResourceKey key, WorkloadEndpoint wep) {
        String node = wep.spec().node();
        if (node == null || node.isBlank()) {
            if (!wep.spec().ipNetworks().isEmpty()) {
                log.warn("{} has no spec.node; no routes for it", key);
            }
            return null;
        }
        Set<Cidr> nets = new LinkedHashSet<>();
        for (String text : wep.spec().ipNetworks()) {
            var cidr = Cidr.tryParseCidrOrIp(text == null ? null : text.trim());
            if (cidr.isEmpty()) {
                log.warn("{} spec.ipNetworks entry \"{}\" is not a CIDR; skipped", key, text);
            } else {
                nets.add(cidr.get().network());
            }
        }
        return nets.isEmpty() ? null : new Endpoint(node, wep.spec().interfaceName(), Set.copyOf(nets));
    }

    /** Moves a claimant's claims from {@code before} to {@code after}, touching only the difference (so a conflict is logged once). */
    private void reclaim(ResourceKey claimant, Set<Cidr> before, Set<Cidr> after) {
        for (Cidr dst : before) {
            if (!after.contains(dst)) {
                unclaim(dst, claimant);
            }
        }
        for (Cidr dst : after) {
            if (!before.contains(dst)) {
                claim(dst, claimant);
            }
        }
    }

    private void claim(Cidr dst, ResourceKey claimant) {
        TreeSet<ResourceKey> set = claims.computeIfAbsent(dst, d -> new TreeSet<>(BY_KEY));
        if (set.add(claimant) && set.size() > 1) {
            log.warn("{} is claimed by {} and {}; routing to {}", dst, claimant,
                    set.stream().filter(k -> !k.equals(claimant)).toList(), set.first());
        }
    }

    private void unclaim(Cidr dst, ResourceKey claimant) {
        TreeSet<ResourceKey> set = claims.get(dst);
        if (set != null && set.remove(claimant) && set.isEmpty()) {
            claims.remove(dst);
        }
    }

    /** The one place a route is decided: from current state only, then compared with what was sent. */
    private void recompute(Cidr dst) {
        String key = dst.toString();
        RouteUpdate next = desired(dst);
        if (next == null) {
            if (sent.remove(key) != null) {
                out.onInfraUpdate(new RouteRemove(key));
            }
            return;
        }
        if (!next.equals(sent.put(key, next))) {
            out.onInfraUpdate(next);
        }
    }

    private RouteUpdate desired(Cidr dst) {
        TreeSet<ResourceKey> claimants = claims.get(dst);
        if (claimants == null || claimants.isEmpty()) {
            return null;
        }
        ResourceKey winner = claimants.first();
        Pool pool = null;
        String poolName = null;
        for (Map.Entry<String, Pool> e : pools.entrySet()) {
            Pool p = e.getValue();
            if (p.cidr().contains(dst) && (pool == null || p.cidr().prefixLength() > pool.cidr().prefixLength()
                    || (p.cidr().prefixLength() == pool.cidr().prefixLength() && e.getKey().compareTo(poolName) < 0))) {
                pool = p;
                poolName = e.getKey();
            }
        }
        boolean nat = pool != null && pool.natOutgoing();
        if (winner.kind() == ResourceKind.NODE) {
            String node = winner.name();
            RouteType type = node.equals(hostname) ? RouteType.LOCAL_HOST : RouteType.REMOTE_HOST;
            return new RouteUpdate(dst.toString(), type, node, dst.address().toString(), null, poolName, nat);
        }
        if (winner.kind() == ResourceKind.IPAM_BLOCK) {
            Block b = blocks.get(winner);
            boolean local = b.node().equals(hostname);
            NodeAddresses addrs = nodes.get(b.node());
            IpAddress nodeIp = addrs == null ? null : addrs.of(dst.version());
            return new RouteUpdate(dst.toString(), local ? RouteType.LOCAL_BLOCK : RouteType.REMOTE_BLOCK, b.node(),
                    nodeIp == null ? null : nodeIp.toString(), null, poolName, nat);
        }
        Endpoint ep = endpoints.get(winner);
        boolean local = ep.node().equals(hostname);
        NodeAddresses addrs = nodes.get(ep.node());
        IpAddress nodeIp = addrs == null ? null : addrs.of(dst.version());
        return new RouteUpdate(dst.toString(), local ? RouteType.LOCAL_WORKLOAD : RouteType.REMOTE_WORKLOAD,
                ep.node(), nodeIp == null ? null : nodeIp.toString(), local ? ep.interfaceName() : null, poolName, nat);
    }

    private static Set<Cidr> hostDsts(NodeAddresses a) {
        return java.util.stream.Stream.of(a.ipv4(), a.ipv6()).filter(java.util.Objects::nonNull).map(Cidr::of)
                .collect(java.util.stream.Collectors.toUnmodifiableSet());
    }

    /** {@return every claimed destination inside {@code pool}}: one range of the address-ordered index. */
    private List<Cidr> claimedWithin(Cidr pool) {
        Cidr net = pool.network();
        Cidr from = new Cidr(net.address(), 0);
        Cidr to = Cidr.of(lastAddress(net));
        return claims.subMap(from, true, to, true).keySet().stream().filter(pool::contains).toList();
    }

    static IpAddress lastAddress(Cidr net) {
        IpAddress a = net.address();
        int hostBits = a.bits() - net.prefixLength();
        if (a.version() == 4) {
            return new IpAddress(4, 0, a.low() | ones(hostBits));
        }
        long low = a.low() | ones(Math.min(hostBits, 64));
        long high = a.high() | ones(Math.max(hostBits - 64, 0));
        return new IpAddress(6, high, low);
    }

    private static long ones(int bits) {
        return bits <= 0 ? 0L : bits >= 64 ? -1L : (1L << bits) - 1;
    }
}
