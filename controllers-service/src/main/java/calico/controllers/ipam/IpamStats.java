package calico.controllers.ipam;

import java.util.Map;

/**
 * Allocation figures by pool and node, Calico's kube-controllers metrics: {@code ipam_allocations_in_use},
 * {@code ipam_allocations_borrowed}, {@code ipam_allocations_gc_candidates}, {@code ipam_blocks}
 * (labels {@code ippool}, {@code node}) and {@code ipam_ippool_size} ({@code ippool}).
 */
public record IpamStats(Map<PoolNode, Long> inUse, Map<PoolNode, Long> borrowed, Map<PoolNode, Long> gcCandidates,
                        Map<PoolNode, Long> blocks, Map<String, Long> poolSizes) {

    public IpamStats {
        inUse = Map.copyOf(inUse);
        borrowed = Map.copyOf(borrowed);
        gcCandidates = Map.copyOf(gcCandidates);
        blocks = Map.copyOf(blocks);
        poolSizes = Map.copyOf(poolSizes);
    }

    /** A metric's labels: the pool's name ({@code no_ippool} for a block outside every pool) and the node. */
    public record PoolNode(String ippool, String node) {
    }
}
