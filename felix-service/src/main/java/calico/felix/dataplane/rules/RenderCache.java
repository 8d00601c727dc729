package calico.felix.dataplane.rules;

import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Set;
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
 * them with {@code ==}. Workload endpoints whose chains have the same inputs (the replicas of a
 * deployment: the same tiers, policies and profiles) share one list of rules, rendered once, so a
 * driver can format it once too. Everything is dropped when the marks, interface prefix, families or
 * settings change. One per driver and family view; not thread-safe.
 */
public final class RenderCache {

    private record Entry(List<Object> key, List<GenericChain> chains) {
    }

    /** An endpoint's chains: the update object, its missing policies (derived), and the model's policy-ID version then. */
    private record EndpointEntry(Object endpoint, List<?> missing, long policyKeys, List<GenericChain> chains) {
    }

    private Object settingsKey;
    private Map<Object, Entry> entries = new HashMap<>();
    private Map<String, EndpointEntry> endpoints = new HashMap<>();
    private Map<String, GenericChain> singles = new HashMap<>();
    private Map<Object, Set<String>> setIds = new IdentityHashMap<>();
    private Map<Object, List<GenericRule>> bodies = new HashMap<>();

    /**
     * {@return a round of rendering} against what the previous round kept; {@code key}: the
     * renderer's inputs besides the model; {@code policyKeys}: the model's {@link DataplaneModel#policyKeysVersion()}.
     */
    Round begin(Object key, long policyKeys) {
        if (!key.equals(settingsKey)) {
            settingsKey = key;
            entries = new HashMap<>();
            endpoints = new HashMap<>();
            singles = new HashMap<>();
            setIds = new IdentityHashMap<>();
            bodies = new HashMap<>();
        }
        return new Round(this, policyKeys);
    }

    /** One render: looks things up in the previous round's maps, keeps what this render used. */
    static final class Round {

        static final Round NONE = new Round(null, 0);

        private final RenderCache cache;
        private final long policyKeys;
        private final Map<Object, Entry> usedEntries = new HashMap<>();
        private final Map<String, EndpointEntry> usedEndpoints = new HashMap<>();
        private final Map<String, GenericChain> usedSingles = new HashMap<>();
        private final Map<Object, Set<String>> usedSetIds = new IdentityHashMap<>();
        private final Map<Object, List<GenericRule>> usedBodies = new HashMap<>();

        private Round(RenderCache cache, long policyKeys) {
            this.cache = cache;
            this.policyKeys = policyKeys;
        }

        /**
         * An endpoint's chains: last time's if the model holds the same update object and the
         * same of its policies are missing (not even computed while no policy ID came or went).
         */
        List<GenericChain> endpoint(String id, Object endpoint, Supplier<List<?>> missing,
                                    Supplier<List<GenericChain>> render) {
            if (cache == null) {
                return render.get();
            }
            EndpointEntry old = cache.endpoints.get(id);
            EndpointEntry e;
            if (old != null && old.endpoint() == endpoint && old.policyKeys() == policyKeys) {
                e = old;
            } else {
                List<?> m = missing.get();
                e = old != null && old.endpoint() == endpoint && old.missing().equals(m)
                        ? new EndpointEntry(endpoint, m, policyKeys, old.chains())
                        : new EndpointEntry(endpoint, m, policyKeys, List.copyOf(render.get()));
            }
            usedEndpoints.put(id, e);
            return e.chains();
        }

        /**
         * {@return the rules of a workload endpoint chain whose inputs are {@code key}}: the list
         * this round or the last already rendered for the same key (the same instance), else {@code render}'s.
         */
        List<GenericRule> endpointBody(Object key, Supplier<List<GenericRule>> render) {
            if (cache == null) {
                return render.get();
            }
            List<GenericRule> body = usedBodies.get(key);
            if (body == null) {
                body = cache.bodies.get(key);
                if (body == null) {
                    body = List.copyOf(render.get());
                }
                usedBodies.put(key, body);
            }
            return body;
        }

        /** {@return the policy's graph set IDs}, computed once per policy object. */
        Set<String> setIds(calico.felix.calc.CompiledPolicy p) {
            Set<String> ids = cache == null ? null : cache.setIds.get(p);
            if (ids == null) {
                ids = p.ipSetIds().collect(java.util.stream.Collectors.toUnmodifiableSet());
            }
            if (cache != null) {
                usedSetIds.put(p, ids);
            }
            return ids;
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
            return same("", chain);
        }

        /** The same within {@code scope} (a table: raw and filter both have a {@code cali-OUTPUT}). */
        GenericChain same(String scope, GenericChain chain) {
            if (cache == null) {
                return chain;
            }
            String key = scope + chain.name();
            GenericChain old = cache.singles.get(key);
            GenericChain out = chain.equals(old) ? old : chain;
            usedSingles.put(key, out);
            return out;
        }

        /** Keeps only what this render used. */
        void end() {
            if (cache != null) {
                cache.entries = usedEntries;
                cache.endpoints = usedEndpoints;
                cache.singles = usedSingles;
                cache.setIds = usedSetIds;
                cache.bodies = usedBodies;
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
