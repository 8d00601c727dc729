package calico.controllers.app;

import calico.controllers.ipam.GcResult;
import calico.controllers.ipam.IpamStats;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Calico's kube-controllers IPAM metrics from each GC run, with Calico's names and labels:
 * {@code ipam_allocations_in_use}, {@code ipam_allocations_borrowed}, {@code ipam_allocations_gc_candidates},
 * {@code ipam_blocks} ({@code ippool}, {@code node}), {@code ipam_ippool_size} ({@code ippool}),
 * {@code ipam_allocations_gc_reclamations} ({@code ippool}, {@code node}: a counter, served without Micrometer's
 * {@code _total} on the Calico port through {@link ControllersCalicoMetrics#TABLE}), and Calico's older per-node
 * sums over the pools {@code ipam_allocations_per_node}, {@code ipam_allocations_borrowed_per_node},
 * {@code ipam_blocks_per_node} ({@code node}).
 */
final class IpamMetrics {

    private final MultiGauge inUse;
    private final MultiGauge borrowed;
    private final MultiGauge candidates;
    private final MultiGauge blocks;
    private final MultiGauge poolSize;
    private final MultiGauge inUsePerNode;
    private final MultiGauge borrowedPerNode;
    private final MultiGauge blocksPerNode;
    private final MeterRegistry registry;
    private final Map<IpamStats.PoolNode, AtomicLong> reclaimed = new ConcurrentHashMap<>();
    /**
     * The values the gauges read, updated in place: Micrometer holds gauge state weakly (so these maps keep it
     * alive), and rows are registered without overwrite (re-registering a row removes it for a moment, and a
     * scrape then missed the series).
     */
    private final Map<String, Map<Object, AtomicLong>> values = new ConcurrentHashMap<>();

    IpamMetrics(MeterRegistry registry) {
        this.registry = registry;
        inUse = gauge(registry, "ipam_allocations_in_use",
                "Number of Calico IP allocations currently in use by a workload or interface.");
        borrowed = gauge(registry, "ipam_allocations_borrowed",
                "Number of Calico IP allocations in use where the allocation was borrowed from a block affine to another node.");
        candidates = gauge(registry, "ipam_allocations_gc_candidates",
                "Number of Calico IP allocations currently marked by the GC as potential leaks.");
        blocks = gauge(registry, "ipam_blocks", "Number of IPAM blocks.");
        poolSize = gauge(registry, "ipam_ippool_size", "Number of IP addresses in the IP Pool CIDR.");
        inUsePerNode = gauge(registry, "ipam_allocations_per_node", "Number of IPs allocated, over all pools.");
        borrowedPerNode = gauge(registry, "ipam_allocations_borrowed_per_node",
                "Number of allocated IPs that are from non-affine blocks, over all pools.");
        blocksPerNode = gauge(registry, "ipam_blocks_per_node", "Number of IPAM blocks, over all pools.");
    }

    private static MultiGauge gauge(MeterRegistry registry, String name, String help) {
        return MultiGauge.builder(name).description(help).register(registry);
    }

    void record(GcResult r) {
        IpamStats s = r.stats();
        r.reclaimed().forEach((k, n) -> reclaimed.computeIfAbsent(k, this::reclamationCounter).addAndGet(n));
        inUse.register(rows("in_use", s.inUse()), false);
        borrowed.register(rows("borrowed", s.borrowed()), false);
        candidates.register(rows("candidates", s.gcCandidates()), false);
        blocks.register(rows("blocks", s.blocks()), false);
        poolSize.register(held("pool_size", s.poolSizes()).entrySet().stream()
                .<MultiGauge.Row<?>>map(e -> MultiGauge.Row.of(Tags.of("ippool", (String) e.getKey()), e.getValue(),
                        AtomicLong::get)).toList(), false);
        inUsePerNode.register(perNode("in_use_per_node", s.inUse()), false);
        borrowedPerNode.register(perNode("borrowed_per_node", s.borrowed()), false);
        blocksPerNode.register(perNode("blocks_per_node", s.blocks()), false);
    }

    /** A pool and node's reclamations: a counter that only grows, read from the value {@link #reclaimed} holds. */
    private AtomicLong reclamationCounter(IpamStats.PoolNode k) {
        AtomicLong n = new AtomicLong();
        FunctionCounter.builder("ipam_allocations_gc_reclamations", n, AtomicLong::get)
                .description("Count of Calico IP allocations that have been reclaimed by the GC.")
                .tags("ippool", k.ippool(), "node", k.node()).register(registry);
        return n;
    }

    /** Calico's older per-node gauges: {@code current} summed over the pools. */
    private List<MultiGauge.Row<?>> perNode(String metric, Map<IpamStats.PoolNode, Long> current) {
        Map<String, Long> sums = new java.util.TreeMap<>();
        current.forEach((k, v) -> sums.merge(k.node(), v, Long::sum));
        return held(metric, sums).entrySet().stream().<MultiGauge.Row<?>>map(e -> MultiGauge.Row.of(
                Tags.of("node", (String) e.getKey()), e.getValue(), AtomicLong::get)).toList();
    }

    private List<MultiGauge.Row<?>> rows(String metric, Map<IpamStats.PoolNode, Long> current) {
        return held(metric, current).entrySet().stream().<MultiGauge.Row<?>>map(e -> {
            IpamStats.PoolNode k = (IpamStats.PoolNode) e.getKey();
            return MultiGauge.Row.of(Tags.of("ippool", k.ippool(), "node", k.node()), e.getValue(), AtomicLong::get);
        }).toList();
    }

    /** {@code current} in the strongly held map of {@code metric}: series that are gone are dropped. */
    private Map<Object, AtomicLong> held(String metric, Map<?, Long> current) {
        Map<Object, AtomicLong> m = values.computeIfAbsent(metric, x -> new ConcurrentHashMap<>());
        m.keySet().retainAll(current.keySet());
        current.forEach((k, v) -> m.computeIfAbsent(k, x -> new AtomicLong()).set(v));
        return m;
    }
}
