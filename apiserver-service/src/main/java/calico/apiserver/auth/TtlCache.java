package calico.apiserver.auth;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Answers kept for a while: k8s.io/apiserver caches delegated token and access reviews (10 s
 * by default) so that a burst of requests by one caller costs one review. Bounded: when full,
 * expired entries go first, then everything.
 */
final class TtlCache<K, V> {

    /** k8s keeps up to 32 stripes of 1,024 tokens; one map of that size here. */
    static final int MAX_ENTRIES = 32_768;

    private record Entry<V>(V value, Instant expires) {
    }

    private final Map<K, Entry<V>> entries = new ConcurrentHashMap<>();
    private final Clock clock;

    TtlCache(Clock clock) {
        this.clock = clock;
    }

    Optional<V> get(K key) {
        Entry<V> e = entries.get(key);
        if (e == null) {
            return Optional.empty();
        }
        if (!clock.instant().isBefore(e.expires())) {
            entries.remove(key, e);
            return Optional.empty();
        }
        return Optional.of(e.value());
    }

    /** Keeps {@code value} for {@code ttl}; a zero or negative ttl keeps nothing (caching off). */
    void put(K key, V value, Duration ttl) {
        if (ttl.isZero() || ttl.isNegative()) {
            return;
        }
        Instant now = clock.instant();
        if (entries.size() >= MAX_ENTRIES) {
            entries.values().removeIf(e -> !now.isBefore(e.expires()));
            if (entries.size() >= MAX_ENTRIES) {
                entries.clear();
            }
        }
        entries.put(key, new Entry<>(value, now.plus(ttl)));
    }

    int size() {
        return entries.size();
    }
}
