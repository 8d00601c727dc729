package calico.goldmane.store;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Distinct addresses seen for one flow key, each with the first and last bucket it was seen in.
 * Capped: when full, the address seen least recently makes room, so the set is best effort and
 * a query returns the retained addresses whose sighting span overlaps its range.
 */
final class IpSet {

    private final int cap;
    private final LinkedHashMap<String, int[]> seen;

    IpSet(int cap) {
        this.cap = cap;
        this.seen = new LinkedHashMap<>(8, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, int[]> eldest) {
                return size() > IpSet.this.cap;
            }
        };
    }

    void add(List<String> ips, int bucket) {
        for (int i = 0, n = ips.size(); i < n; i++) {
            String ip = ips.get(i);
            if (ip.isEmpty()) {
                continue;
            }
            int[] span = seen.get(ip);
            if (span == null) {
                seen.put(ip, new int[] {bucket, bucket});
            } else {
                span[0] = Math.min(span[0], bucket);
                span[1] = Math.max(span[1], bucket);
            }
        }
    }

    List<String> between(int from, int to) {
        var out = new ArrayList<String>();
        for (var e : seen.entrySet()) {
            int[] span = e.getValue();
            if (span[0] <= to && span[1] >= from) {
                out.add(e.getKey());
            }
        }
        out.sort(null);
        return out;
    }

    void dropBefore(int bucket) {
        seen.values().removeIf(span -> span[1] < bucket);
    }

    boolean isEmpty() {
        return seen.isEmpty();
    }
}
