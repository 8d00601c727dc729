package calico.controllers.ipam;

import java.time.Instant;
import java.util.Map;

/**
 * What IPAM GC remembers between runs, passed in and returned so that nothing is hidden: since when
 * each allocation has looked leaked, and since when each affine block has been empty. An entry
 * disappears as soon as a run sees the allocation valid (or gone) or the block used (or gone).
 */
public record GcState(Map<Allocation.Id, Instant> leakSince, Map<String, Instant> emptySince) {

    public GcState {
        leakSince = Map.copyOf(leakSince);
        emptySince = Map.copyOf(emptySince);
    }

    public static GcState empty() {
        return new GcState(Map.of(), Map.of());
    }
}
