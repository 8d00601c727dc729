package calico.goldmane.store;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Distinct addresses seen for one flow key, each with the first and last bucket it was seen in.
 * Capped: when full, the address seen least recently makes room, so the set is best effort and
 * a query returns the retained addresses whose sighting span overlaps its range.
 *
 * <p>Parallel arrays searched linearly (a key has a handful of addresses; the cap is 100): no
 * hashing of the freshly decoded strings and no map entries. The sorted list of every retained
 * address is cached until the membership changes, for queries over a key's whole life.
 */
final class IpSet {

    private final int cap;
    private String[] ips = new String[2];
    private int[] first = new int[2];
    private int[] last = new int[2];
    private long[] seen = new long[2];
    private int size;
    private long tick;
    private List<String> all;

    IpSet(int cap) {
        this.cap = cap;
    }

    void add(List<String> in, int bucket) {
        for (int i = 0, n = in.size(); i < n; i++) {
            String ip = in.get(i);
            if (ip.isEmpty()) {
                continue;
            }
            int at = indexOf(ip);
            if (at < 0) {
                at = room();
                ips[at] = ip;
                first[at] = bucket;
                last[at] = bucket;
                all = null;
            } else {
                first[at] = Math.min(first[at], bucket);
                last[at] = Math.max(last[at], bucket);
            }
            seen[at] = ++tick;
        }
    }

    private int indexOf(String ip) {
        for (int i = 0; i < size; i++) {
            if (ips[i].equals(ip)) {
                return i;
            }
        }
        return -1;
    }

    /** {@return a free index: a new one, or the least recently seen address's when full} */
    private int room() {
        if (size < cap) {
            if (size == ips.length) {
                int c = Math.min(cap, Math.max(4, size * 2));
                ips = Arrays.copyOf(ips, c);
                first = Arrays.copyOf(first, c);
                last = Arrays.copyOf(last, c);
                seen = Arrays.copyOf(seen, c);
            }
            return size++;
        }
        int lru = 0;
        for (int i = 1; i < size; i++) {
            if (seen[i] < seen[lru]) {
                lru = i;
            }
        }
        return lru;
    }

    List<String> between(int from, int to) {
        var out = new ArrayList<String>();
        for (int i = 0; i < size; i++) {
            if (first[i] <= to && last[i] >= from) {
                out.add(ips[i]);
            }
        }
        out.sort(null);
        return out;
    }

    /** {@return every retained address, sorted (immutable, cached)} */
    List<String> all() {
        if (all == null) {
            String[] copy = Arrays.copyOf(ips, size);
            Arrays.sort(copy);
            all = List.of(copy);
        }
        return all;
    }

    void dropBefore(int bucket) {
        int w = 0;
        for (int i = 0; i < size; i++) {
            if (last[i] >= bucket) {
                if (w != i) {
                    ips[w] = ips[i];
                    first[w] = first[i];
                    last[w] = last[i];
                    seen[w] = seen[i];
                }
                w++;
            }
        }
        if (w != size) {
            Arrays.fill(ips, w, size, null);
            size = w;
            all = null;
        }
    }

    boolean isEmpty() {
        return size == 0;
    }
}
