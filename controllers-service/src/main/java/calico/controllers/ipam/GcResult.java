package calico.controllers.ipam;

import java.util.List;
import java.util.Map;

/**
 * The outcome of one IPAM GC run.
 *
 * @param state            what the next run starts from
 * @param releasedHandles  handles released with every address they held
 * @param reclaimed        addresses released, counted by (pool, node)
 * @param releasedBlocks   empty blocks released from their (live) nodes, as {@code cidr@node}
 * @param releasedNodes    gone nodes whose block affinities were released
 * @param stats            the allocation figures after the run (metrics)
 */
public record GcResult(GcState state, List<String> releasedHandles, Map<IpamStats.PoolNode, Integer> reclaimed,
                       List<String> releasedBlocks, List<String> releasedNodes, IpamStats stats) {

    public GcResult {
        releasedHandles = List.copyOf(releasedHandles);
        reclaimed = Map.copyOf(reclaimed);
        releasedBlocks = List.copyOf(releasedBlocks);
        releasedNodes = List.copyOf(releasedNodes);
    }
}
