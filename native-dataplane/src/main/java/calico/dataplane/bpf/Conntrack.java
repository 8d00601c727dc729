package calico.dataplane.bpf;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The policy program's conntrack map ({@code cali_ct4}) seen from user space: its entries
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

    /**
     * {@return the live entries of the conntrack map pinned in {@code pinDir}}, opened by path (no
     * program loaded: flow logs read the counters of the driver's maps), an entry expired at
     * {@code nowNs} under the pinned {@code cali_ct_timeouts} left out as the program treats it: absent
     */
    public static Map<PolicyMaps.CtEntry, PolicyMaps.CtValue> livePinned(java.nio.file.Path pinDir, long nowNs) {
        Map<PolicyMaps.CtState, java.time.Duration> timeouts = BpfMap.withPinned(
                pinDir.resolve(PolicyMaps.CT_TIMEOUTS), 4, 4, Conntrack::timeouts);
        return BpfMap.withPinned(pinDir.resolve(PolicyMaps.CONNTRACK), PolicyMaps.CT_KEY_SIZE,
                PolicyMaps.CT_VALUE_SIZE, m -> {
                    Map<PolicyMaps.CtEntry, PolicyMaps.CtValue> live = new Conntrack(m).entries();
                    live.values().removeIf(v -> v.expired(nowNs, timeouts));
                    return live;
                });
    }

    /** {@return the timeouts a {@code cali_ct_timeouts} map overrides} (0: the state's default, left out) */
    private static Map<PolicyMaps.CtState, java.time.Duration> timeouts(BpfMap m) {
        Map<PolicyMaps.CtState, java.time.Duration> out = new java.util.EnumMap<>(PolicyMaps.CtState.class);
        for (PolicyMaps.CtState s : PolicyMaps.CtState.values()) {
            byte[] v = m.get(PolicyMaps.ctTimeoutKey(s));
            int seconds = v == null ? 0 : java.nio.ByteBuffer.wrap(v).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt();
            if (seconds > 0) {
                out.put(s, java.time.Duration.ofSeconds(seconds));
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
