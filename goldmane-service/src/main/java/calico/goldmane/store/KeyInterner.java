package calico.goldmane.store;

import calico.libcalico.goldmane.proto.FlowKey;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Canonical flow keys, shared between the collector threads and the writer. A collector thread
 * interns each incoming key ({@link #intern}): the hashing and the deep equality of a freshly
 * decoded {@link FlowKey} (its policy trace included) run there, in parallel, instead of on the
 * single writer. The writer then reaches the key's {@link KeyEntry} through one field read.
 *
 * <p>Threading: {@link #intern} is safe from any thread. {@link Interned#entry} is read and
 * written only by the writer (the object reaches it through the ingest queue, which publishes
 * it); only the writer removes keys, when their {@link KeyEntry} expires. A collector may still
 * hold an {@link Interned} the writer has just removed: the writer recognises it by its null
 * entry and re-canonicalises it ({@link #canonical}), so a key never gets two entries.
 */
public final class KeyInterner {

    /** A canonical key and, on the writer, its entry in the ring. */
    public static final class Interned {
        final FlowKey key;
        /** Writer-only: the key's entry, or null while it has none (new, or expired). */
        KeyEntry entry;
        /**
         * Collector-side shortcut: the canonical labels this key's last flow carried. Racy by
         * design (any thread), harmless: {@link Labels} is immutable (final fields), and a stale
         * or missing value only means a lookup in the labels interner.
         */
        Labels lastLabels;

        Interned(FlowKey key) {
            this.key = key;
        }

        public FlowKey key() {
            return key;
        }
    }

    private final ConcurrentHashMap<FlowKey, Interned> keys = new ConcurrentHashMap<>(1 << 15);

    /** {@return the canonical holder of this key}; any thread. */
    public Interned intern(FlowKey key) {
        Interned i = keys.get(key);
        if (i != null) {
            return i;
        }
        Interned fresh = new Interned(key);
        i = keys.putIfAbsent(key, fresh);
        return i == null ? fresh : i;
    }

    /** Writer only: {@return the holder that is in the table now for {@code i}'s key} (i itself if possible). */
    Interned canonical(Interned i) {
        Interned now = keys.putIfAbsent(i.key, i);
        return now == null ? i : now;
    }

    /** Writer only: forgets an expired key. */
    void remove(Interned i) {
        i.entry = null;
        keys.remove(i.key, i);
    }

    int size() {
        return keys.size();
    }
}
