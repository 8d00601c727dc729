package calico.felix.dataplane.bpf;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * Numeric IDs of the BPF dataplane's sets (and, a second instance, of its flow-log prefixes),
 * stable while in use. IDs are never reused within a driver's life, and a driver starts above
 * every ID the pinned maps already hold: a table written now can never read members an older
 * table put under the same ID, and a reader's cached prefix of an ID stays right.
 */
final class SetIds {

    private final Map<String, Integer> ids = new HashMap<>();
    private int next;

    SetIds(int floor) {
        this.next = Math.max(1, floor);
    }

    int id(String key) {
        return ids.computeIfAbsent(key, k -> {
            if (next == Integer.MAX_VALUE) {
                throw new IllegalStateException("BPF set IDs exhausted");
            }
            return next++;
        });
    }

    /** {@return the ID of {@code key}, or null when it has none} */
    Integer existing(String key) {
        return ids.get(key);
    }

    /** Forgets every key not in {@code used}. */
    void retainOnly(Set<String> used) {
        ids.keySet().retainAll(used);
    }

    int size() {
        return ids.size();
    }
}
