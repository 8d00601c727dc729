package calico.goldmane.store;

import calico.libcalico.goldmane.proto.Flow;
import java.util.List;

/**
 * One reported flow as the writer applies it, prepared on the collector's thread by
 * {@link Intake#prepare}: the key interned, the labels canonical, the counters read. What waits
 * in the ingest queue is this, not the decoded {@link Flow}: the decoded key, its policy trace
 * and the label strings are garbage as soon as they are interned, which keeps the queue's live
 * set (and the collector's GC work) small.
 *
 * @param key      the canonical key, or null when the flow had none (invalid)
 * @param counters indexed by {@link Stat}
 */
public record Update(KeyInterner.Interned key, long start, long end, long[] counters, Labels labels,
                     List<String> sourceIps, List<String> destIps) {

    boolean valid() {
        if (key == null || end < start) {
            return false;
        }
        for (long c : counters) {
            if (c < 0) {
                return false;
            }
        }
        return true;
    }
}
