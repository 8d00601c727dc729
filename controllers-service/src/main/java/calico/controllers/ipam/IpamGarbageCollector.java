package calico.controllers.ipam;

import calico.api.model.BlockAffinity;
import calico.api.model.IPAMBlock;
import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.Resource;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import calico.controllers.node.ClusterNodes;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.ipam.IpamClient;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Calico's IPAM garbage collection (kube-controllers' node controller), one run per
 * {@link #reconcile} from the blocks, the Pods and the nodes as they are now plus {@link GcState}:
 *
 * <ol>
 *   <li>Each allocation is <b>valid</b> (its pod exists, is not finished, is on the allocation's node and
 *       holds the address or has no address yet; a tunnel address whose node is live; an owner GC cannot
 *       judge: no handle, no pod attributes) or <b>leaked</b>. A leak on a live node is confirmed once it
 *       has looked leaked for {@code leakGracePeriod}; a leak on a gone node at once.</li>
 *   <li>A handle is released (every address of it) only when all its allocations are confirmed leaks, and
 *       only after a fresh read of each pod still says so: a live pod's address is never released. The run's
 *       handles are released together ({@link IpamClient#releaseByHandles}: each block read and written once).</li>
 *   <li>A gone node with no valid allocation left loses its block affinities; a live node's block that
 *       has been empty for {@code leakGracePeriod} is released from it, except the node's last block.</li>
 * </ol>
 *
 * <p>Without {@code leakGracePeriod} (0: GC off) only the allocations and blocks of gone nodes are
 * released. Every release goes through libcalico's compare-and-swap IPAM, so a GC racing a CNI plugin
 * never frees an address that was handed out again meanwhile under another handle.
 */
public final class IpamGarbageCollector {

    private static final Logger LOG = LoggerFactory.getLogger(IpamGarbageCollector.class);
    static final String NO_POOL = "no_ippool";

    private final Datastore datastore;
    private final IpamClient ipam;
    private final Pods pods;
    private final Clock clock;

    public IpamGarbageCollector(Datastore datastore, IpamClient ipam, Pods pods, Clock clock) {
        this.datastore = datastore;
        this.ipam = ipam;
        this.pods = pods;
        this.clock = clock;
    }

    private enum Verdict { VALID, LEAK, LEAK_NODE_GONE }

    public GcResult reconcile(ClusterNodes nodes, Optional<Duration> leakGracePeriod, GcState state) {
        Instant now = clock.instant();
        PoolNames poolNames = new PoolNames(datastore.list(ResourceKind.IP_POOL).items().stream().map(IPPool.class::cast)
                .toList());
        List<IPAMBlock> listed = blocks();
        List<Allocation> allocations = Allocation.inBlocks(listed);
        Map<String, PodView> podsNow = pods.all();

        Map<Allocation.Id, Instant> leakSince = new HashMap<>();
        Map<String, List<Allocation>> byHandle = new TreeMap<>();
        Map<Allocation.Id, Boolean> confirmed = new HashMap<>();
        Set<String> nodesWithValid = new TreeSet<>();
        for (Allocation a : allocations) {
            Verdict v = verdict(a, a.ofPod() ? podsNow.get(podKey(a)) : null, nodes);
            if (a.handle() != null) {
                byHandle.computeIfAbsent(a.handle(), h -> new ArrayList<>()).add(a);
            }
            switch (v) {
                case VALID -> {
                    confirmed.put(a.id(), false);
                    if (a.node() != null) {
                        nodesWithValid.add(a.node());
                    }
                }
                case LEAK_NODE_GONE -> confirmed.put(a.id(), true);
                case LEAK -> {
                    if (leakGracePeriod.isPresent()) {
                        Instant since = state.leakSince().getOrDefault(a.id(), now);
                        leakSince.put(a.id(), since);
                        confirmed.put(a.id(), !since.plus(leakGracePeriod.get()).isAfter(now));
                    } else {
                        confirmed.put(a.id(), false);
                    }
                }
            }
        }

        List<String> releasedHandles = new ArrayList<>();
        Map<IpamStats.PoolNode, Integer> reclaimed = new HashMap<>();
        for (Map.Entry<String, List<Allocation>> e : byHandle.entrySet()) {
            List<Allocation> held = e.getValue();
            if (!held.stream().allMatch(a -> confirmed.get(a.id()))) {
                continue; // all or none per handle: one valid address keeps the handle whole
            }
            if (!stillLeaked(held, nodes)) {
                held.forEach(a -> leakSince.remove(a.id()));
                continue;
            }
            releasedHandles.add(e.getKey());
            for (Allocation a : held) {
                leakSince.remove(a.id());
                reclaimed.merge(new IpamStats.PoolNode(poolNames.of(a.block()), String.valueOf(a.node())), 1, Integer::sum);
            }
            LOG.info("IPAM GC releases handle {} ({} address(es): {})", e.getKey(), held.size(),
                    held.stream().map(a -> a.ip().toString()).toList());
        }
        ipam.releaseByHandles(releasedHandles); // one read and write per block for all of them
        List<IPAMBlock> blocks = releasedHandles.isEmpty() ? listed : blocks(); // as the releases left them
        List<String> releasedNodes = releaseGoneNodes(nodes, nodesWithValid);
        Map<String, Instant> emptySince = new HashMap<>();
        List<String> releasedBlocks = releaseEmptyBlocks(blocks, nodes, leakGracePeriod, state, now, emptySince);
        if (!releasedNodes.isEmpty() || !releasedBlocks.isEmpty()) {
            blocks = blocks();
        }
        IpamStats stats = stats(poolNames, Allocation.inBlocks(blocks), leakSince.keySet(), blocks);
        return new GcResult(new GcState(leakSince, emptySince), releasedHandles, reclaimed, releasedBlocks, releasedNodes,
                stats);
    }

    private Verdict verdict(Allocation a, PodView pod, ClusterNodes nodes) {
        if (a.handle() == null) {
            return Verdict.VALID;
        }
        String node = a.attributes().get("node");
        boolean nodeLive = node == null || node.isEmpty() || nodes.live(node);
        if (a.tunnel()) {
            return nodeLive ? Verdict.VALID : Verdict.LEAK_NODE_GONE;
        }
        if (!a.ofPod()) {
            return Verdict.VALID; // an owner we cannot judge: Calico assumes valid
        }
        if (podHolds(pod, a)) {
            return Verdict.VALID;
        }
        return nodeLive ? Verdict.LEAK : Verdict.LEAK_NODE_GONE;
    }

    private static boolean podHolds(PodView pod, Allocation a) {
        if (pod == null || pod.finished()) {
            return false;
        }
        String node = a.attributes().get("node");
        if (pod.node() != null && node != null && !pod.node().equals(node)) {
            return false; // a pod of that name now runs elsewhere: this allocation was its predecessor's
        }
        return pod.ips().isEmpty() || pod.ips().contains(a.ip());
    }

    /** The final look before a release: each pod read again, live. */
    private boolean stillLeaked(List<Allocation> held, ClusterNodes nodes) {
        for (Allocation a : held) {
            if (a.ofPod() && !a.tunnel()) {
                Optional<PodView> now = pods.get(a.attributes().get("namespace"), a.attributes().get("pod"));
                if (podHolds(now.orElse(null), a)) {
                    LOG.info("IPAM GC: {} of pod {} is in use again; kept", a.ip(), podKey(a));
                    return false;
                }
            }
        }
        return true;
    }

    private List<String> releaseGoneNodes(ClusterNodes nodes, Set<String> nodesWithValid) {
        Set<String> affine = new TreeSet<>();
        for (Resource r : datastore.list(ResourceKind.BLOCK_AFFINITY).items()) {
            BlockAffinity a = (BlockAffinity) r;
            if (a.spec() != null && a.spec().node() != null) {
                affine.add(a.spec().node());
            }
        }
        List<String> released = new ArrayList<>();
        for (String node : affine) {
            if (!nodes.live(node) && !nodesWithValid.contains(node)) {
                int n = ipam.releaseHostAffinities(node, false);
                LOG.info("IPAM GC released {} block affinit(ies) of gone node {}", n, node);
                released.add(node);
            }
        }
        return released;
    }

    private List<String> releaseEmptyBlocks(List<IPAMBlock> blocks, ClusterNodes nodes, Optional<Duration> grace,
                                            GcState state, Instant now, Map<String, Instant> emptySince) {
        if (grace.isEmpty()) {
            return List.of();
        }
        Map<String, Integer> blocksPerNode = new HashMap<>();
        blocks.forEach(b -> {
            String n = b.spec().affineNode();
            if (n != null) {
                blocksPerNode.merge(n, 1, Integer::sum);
            }
        });
        List<String> released = new ArrayList<>();
        for (IPAMBlock b : blocks) {
            String node = b.spec().affineNode();
            if (node == null || !nodes.live(node) || b.spec().allocations().stream().anyMatch(x -> x != null)) {
                continue;
            }
            String cidr = b.spec().cidr();
            Instant since = state.emptySince().getOrDefault(cidr, now);
            boolean expired = !since.plus(grace.get()).isAfter(now);
            if (expired && blocksPerNode.get(node) > 1 && ipam.releaseBlockAffinity(Cidr.parse(cidr), node, true)) {
                blocksPerNode.merge(node, -1, Integer::sum);
                released.add(cidr + "@" + node);
                LOG.info("IPAM GC released empty block {} from node {}", cidr, node);
            } else {
                emptySince.put(cidr, since);
            }
        }
        return released;
    }

    private List<IPAMBlock> blocks() {
        return datastore.list(ResourceKind.IPAM_BLOCK).items().stream().map(IPAMBlock.class::cast).toList();
    }

    private static String podKey(Allocation a) {
        return a.ofPod() ? Pods.key(a.attributes().get("namespace"), a.attributes().get("pod")) : null;
    }

    /** One run's pools by CIDR, each CIDR parsed once and each block looked up once (not per allocation). */
    private static final class PoolNames {
        private final Map<String, Cidr> cidrs = new LinkedHashMap<>();
        private final Map<Cidr, String> byBlock = new HashMap<>();

        PoolNames(List<IPPool> pools) {
            for (IPPool p : pools) {
                Optional.ofNullable(p.spec()).map(IPPoolSpec::cidr).flatMap(Cidr::tryParse)
                        .ifPresent(c -> cidrs.putIfAbsent(p.metadata().name(), c));
            }
        }

        /** {@return the name of the first pool holding {@code block}}, {@value #NO_POOL} when none does. */
        String of(Cidr block) {
            return byBlock.computeIfAbsent(block, b -> cidrs.entrySet().stream().filter(e -> e.getValue().contains(b))
                    .map(Map.Entry::getKey).findFirst().orElse(NO_POOL));
        }

        /** {@return each pool's number of addresses} (saturated at {@code Long.MAX_VALUE}). */
        Map<String, Long> sizes() {
            Map<String, Long> sizes = new HashMap<>();
            cidrs.forEach((name, c) -> sizes.put(name, c.address().bits() - c.prefixLength() >= 63 ? Long.MAX_VALUE
                    : 1L << (c.address().bits() - c.prefixLength())));
            return sizes;
        }
    }

    private static IpamStats stats(PoolNames pools, List<Allocation> allocations, Set<Allocation.Id> candidates,
                                   List<IPAMBlock> blocks) {
        Map<IpamStats.PoolNode, Long> inUse = new HashMap<>();
        Map<IpamStats.PoolNode, Long> borrowed = new HashMap<>();
        Map<IpamStats.PoolNode, Long> gc = new HashMap<>();
        for (Allocation a : allocations) {
            IpamStats.PoolNode k = new IpamStats.PoolNode(pools.of(a.block()), String.valueOf(a.node()));
            inUse.merge(k, 1L, Long::sum);
            if (a.borrowed()) {
                borrowed.merge(k, 1L, Long::sum);
            }
            if (candidates.contains(a.id())) {
                gc.merge(k, 1L, Long::sum);
            }
        }
        inUse.keySet().forEach(k -> { // every (pool, node) in use has all three series, 0 included
            borrowed.putIfAbsent(k, 0L);
            gc.putIfAbsent(k, 0L);
        });
        Map<IpamStats.PoolNode, Long> blockCounts = new HashMap<>();
        for (IPAMBlock b : blocks) {
            String node = b.spec().affineNode();
            blockCounts.merge(new IpamStats.PoolNode(pools.of(Cidr.parse(b.spec().cidr())),
                    node == null ? "" : node), 1L, Long::sum);
        }
        return new IpamStats(inUse, borrowed, gc, blockCounts, pools.sizes());
    }
}
