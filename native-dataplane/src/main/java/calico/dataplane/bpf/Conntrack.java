package calico.dataplane.bpf;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The policy program's conntrack map ({@code cali_ct2}) seen from user space: its entries
 * decoded, and the cleaner. The program already treats an entry idle longer than its state's
 * timeout as absent; the cleaner frees such entries before the LRU has to evict live ones at
 * the map's cap. Times are CLOCK_MONOTONIC nanoseconds, the clock of {@code bpf_ktime_get_ns}
 * (and of {@link System#nanoTime} on Linux).
 */
public final class Conntrack {

    private final BpfMap map;

    public Conntrack(BpfMap map) {
        if (!map.name().equals(PolicyMaps.CONNTRACK)) {
            throw new IllegalArgumentException("not the conntrack map: " + map.name());
        }
        this.map = map;
    }

    /** {@return every entry, key to value} (an entry deleted meanwhile is left out) */
    public Map<PolicyMaps.CtEntry, PolicyMaps.CtValue> entries() {
        Map<PolicyMaps.CtEntry, PolicyMaps.CtValue> out = new LinkedHashMap<>();
        for (byte[] k : map.keys()) {
            byte[] v = map.get(k);
            if (v != null) {
                out.put(PolicyMaps.decodeCtKey(k), PolicyMaps.decodeCtValue(v));
            }
        }
        return out;
    }

    /** Deletes every entry expired at {@code nowNs} (default timeouts); {@return how many} */
    public int clean(long nowNs) {
        return clean(nowNs, Map.of());
    }

    /** Deletes every entry expired at {@code nowNs} with {@code timeouts} configured (the rest default); {@return how many} */
    public int clean(long nowNs, Map<PolicyMaps.CtState, java.time.Duration> timeouts) {
        int removed = 0;
        for (byte[] k : map.keys()) {
            byte[] v = map.get(k);
            if (v != null && PolicyMaps.decodeCtValue(v).expired(nowNs, timeouts) && map.delete(k)) {
                removed++;
            }
        }
        return removed;
    }
}
