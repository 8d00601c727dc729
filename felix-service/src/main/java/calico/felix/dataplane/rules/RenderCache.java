package calico.felix.dataplane.rules;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The chains one driver rendered last time, so the next render of a slightly changed model
 * renders only what changed (at 2,000 policies a full render is most of a small change's cost).
 * A policy's, profile's or endpoint's chains are reused while the model still holds the very
 * same update object ({@link DataplaneModel} keeps the object each update carried, so {@code ==}
 * means "not updated since") and, for an endpoint, the same of its policies are missing; any
 * other chain is rendered again but replaced by last time's instance when equal. Reused chains
 * are the same instances, so a driver can cache their formatted form by identity and compare
 * them with {@code ==}. Everything is dropped when the marks, interface prefix, families or
 * settings change. One per driver and family view; not thread-safe.
 */
public final class RenderCache {

    private record Entry(List<Object> key, List<GenericChain> chains) {
    }

    private Object settingsKey;
    private Map<Object, Entry> entries = new HashMap<>();
    private Map<String, GenericChain> singles = new HashMap<>();

    /** {@return a round of rendering} against what the previous round kept; {@code key}: the renderer's inputs besides the model. */
    Round begin(Object key) {
        if (!key.equals(settingsKey)) {
            settingsKey = key;
            entries = new HashMap<>();
            singles = new HashMap<>();
        }
        return new Round(this);
    }

    /** One render: looks things up in the previous round's maps, keeps what this render used. */
    static final class Round {

        static final Round NONE = new Round(null);

        private final RenderCache cache;
        private final Map<Object, Entry> usedEntries = new HashMap<>();
        private final Map<String, GenericChain> usedSingles = new HashMap<>();

        private Round(RenderCache cache) {
            this.cache = cache;
        }

        /** The chains rendered for {@code id} (a policy ID, or a kind and name) last time if {@code key} is the same, else {@code render}'s. */
        List<GenericChain> chains(Object id, List<Object> key, Supplier<List<GenericChain>> render) {
            if (cache == null) {
                return render.get();
            }
            Entry old = cache.entries.get(id);
            Entry e = old != null && sameKey(old.key(), key) ? old : new Entry(key, List.copyOf(render.get()));
            usedEntries.put(id, e);
            return e.chains();
        }

        /** {@return last time's instance of this chain when equal}, else {@code chain}. */
        GenericChain same(GenericChain chain) {
            if (cache == null) {
                return chain;
            }
            GenericChain old = cache.singles.get(chain.name());
            GenericChain out = chain.equals(old) ? old : chain;
            usedSingles.put(out.name(), out);
            return out;
        }

        /** Keeps only what this render used. */
        void end() {
            if (cache != null) {
                cache.entries = usedEntries;
                cache.singles = usedSingles;
            }
        }

        /** Model objects compare by identity, derived lists by value. */
        private static boolean sameKey(List<Object> a, List<Object> b) {
            if (a.size() != b.size()) {
                return false;
            }
            for (int i = 0; i < a.size(); i++) {
                Object x = a.get(i);
                Object y = b.get(i);
                if (x != y && !(x instanceof List<?> && x.equals(y))) {
                    return false;
                }
            }
            return true;
        }
    }
}
