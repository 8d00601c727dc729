package calico.felix.calc;

import calico.api.selector.Expr;
import calico.api.selector.Selector;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Which labelled items each selector matches, kept incrementally as selectors and labels change;
 * reports every (selector, item) match that starts or stops, exactly once.
 *
 * <p>Work is proportional to what can change: a label update re-evaluates only the selectors
 * that test a changed key; a new item is tested only against selectors whose required
 * {@code key == value} term it satisfies, selectors that test one of its keys, and selectors
 * that match the empty label set; a new selector is tested only against items carrying its
 * required term, when it has one.
 *
 * @param <S> selector ID
 * @param <K> item key
 */
final class SelectorIndex<S, K> {

    interface MatchListener<S, K> {
        void onMatchStarted(S selectorId, K item);

        void onMatchStopped(S selectorId, K item);
    }

    /** A selector and the {@code key == value} term every match must satisfy, if it has one. */
    private record Entry(Selector selector, String reqKey, String reqValue) {
    }

    private final MatchListener<S, K> listener;
    private final Map<S, Entry> selectors = new HashMap<>();
    private final Map<K, Map<String, String>> labels = new HashMap<>();
    /** Label key → selectors testing it (a selector's required key excluded): re-checked when the key changes. */
    private final Map<String, Set<S>> byKey = new HashMap<>();
    /** As {@link #byKey} but only selectors without a required term: what a new item must be tested against. */
    private final Map<String, Set<S>> byKeyUnrequired = new HashMap<>();
    /** Required key → value → selectors. */
    private final Map<String, Map<String, Set<S>>> byRequired = new HashMap<>();
    /** Selectors matching the empty label set (all(), !has(x)...): they match any new item without their keys. */
    private final Set<S> matchesEmpty = new HashSet<>();
    /** Label key → value → items, to find the candidates of a new selector with a required term. */
    private final Map<String, Map<String, Set<K>>> itemsByLabel = new HashMap<>();
    private final Map<S, Set<K>> matchesBySelector = new HashMap<>();
    private final Map<K, Set<S>> matchesByItem = new HashMap<>();

    SelectorIndex(MatchListener<S, K> listener) {
        this.listener = listener;
    }

    /** Adds or replaces a selector; {@code null} deletes it. */
    void updateSelector(S id, Selector selector) {
        Entry old = selectors.get(id);
        if (old != null && old.selector().equals(selector)) {
            return;
        }
        if (selector == null) {
            deleteSelector(id);
            return;
        }
        Set<K> before = old == null ? Set.of() : new HashSet<>(matchesBySelector.getOrDefault(id, Set.of()));
        if (old != null) {
            unindex(id, old);
        }
        Entry e = entry(selector);
        selectors.put(id, e);
        index(id, e);
        Set<K> after = new HashSet<>();
        for (K item : candidates(e)) {
            Map<String, String> l = labels.get(item);
            if (l != null && selector.matches(l)) {
                after.add(item);
            }
        }
        for (K item : before) {
            if (!after.contains(item)) {
                stop(id, item);
            }
        }
        for (K item : after) {
            if (!before.contains(item)) {
                start(id, item);
            }
        }
    }

    void deleteSelector(S id) {
        Entry old = selectors.remove(id);
        if (old == null) {
            return;
        }
        unindex(id, old);
        Set<K> matched = matchesBySelector.get(id);
        if (matched != null) {
            for (K item : new ArrayList<>(matched)) {
                stop(id, item);
            }
        }
    }

    /** Sets an item's labels; {@code null} deletes the item. */
    void updateLabels(K item, Map<String, String> newLabels) {
        Map<String, String> old = labels.get(item);
        if (Objects.equals(old, newLabels)) {
            return;
        }
        if (newLabels == null) {
            labels.remove(item);
            unindexItem(item, old);
            Set<S> matched = matchesByItem.get(item);
            if (matched != null) {
                for (S id : new ArrayList<>(matched)) {
                    stop(id, item);
                }
            }
            return;
        }
        newLabels = Map.copyOf(newLabels);
        labels.put(item, newLabels);
        if (old != null) {
            unindexItem(item, old);
        }
        indexItem(item, newLabels);
        Set<S> toCheck = new HashSet<>();
        if (old == null) {
            toCheck.addAll(matchesEmpty);
            for (Map.Entry<String, String> l : newLabels.entrySet()) {
                addAll(toCheck, byKeyUnrequired.get(l.getKey()));
                Map<String, Set<S>> req = byRequired.get(l.getKey());
                if (req != null) {
                    addAll(toCheck, req.get(l.getValue()));
                }
            }
        } else {
            Set<String> changed = new HashSet<>();
            for (Map.Entry<String, String> l : newLabels.entrySet()) {
                if (!l.getValue().equals(old.get(l.getKey()))) {
                    changed.add(l.getKey());
                }
            }
            for (String k : old.keySet()) {
                if (!newLabels.containsKey(k)) {
                    changed.add(k);
                }
            }
            for (String k : changed) {
                addAll(toCheck, byKey.get(k));
                Map<String, Set<S>> req = byRequired.get(k);
                if (req != null) {
                    addAll(toCheck, req.get(old.get(k)));
                    addAll(toCheck, req.get(newLabels.get(k)));
                }
            }
        }
        Set<S> current = matchesByItem.getOrDefault(item, Set.of());
        List<S> starts = new ArrayList<>();
        List<S> stops = new ArrayList<>();
        for (S id : toCheck) {
            boolean now = selectors.get(id).selector().matches(newLabels);
            boolean was = current.contains(id);
            if (now && !was) {
                starts.add(id);
            } else if (!now && was) {
                stops.add(id);
            }
        }
        stops.forEach(id -> stop(id, item));
        starts.forEach(id -> start(id, item));
    }

    Set<K> matching(S selectorId) {
        return matchesBySelector.getOrDefault(selectorId, Set.of());
    }

    Set<S> selectorsMatching(K item) {
        return matchesByItem.getOrDefault(item, Set.of());
    }

    private void start(S id, K item) {
        matchesBySelector.computeIfAbsent(id, x -> new HashSet<>()).add(item);
        matchesByItem.computeIfAbsent(item, x -> new HashSet<>()).add(id);
        listener.onMatchStarted(id, item);
    }

    private void stop(S id, K item) {
        remove(matchesBySelector, id, item);
        remove(matchesByItem, item, id);
        listener.onMatchStopped(id, item);
    }

    private static <A, B> void remove(Map<A, Set<B>> m, A a, B b) {
        Set<B> s = m.get(a);
        if (s != null && s.remove(b) && s.isEmpty()) {
            m.remove(a);
        }
    }

    private static <T> void addAll(Set<T> into, Set<T> from) {
        if (from != null) {
            into.addAll(from);
        }
    }

    private static Entry entry(Selector s) {
        Expr root = s.root();
        if (root instanceof Expr.Equals eq) {
            return new Entry(s, eq.label(), eq.value());
        }
        if (root instanceof Expr.And and) {
            // Prefer a term on an ordinary label: namespace terms are shared by many selectors
            // and items, so they narrow the candidates least.
            Expr.Equals first = null;
            for (Expr op : and.operands()) {
                if (op instanceof Expr.Equals eq) {
                    if (!eq.label().equals(CalicoLabels.NAMESPACE) && !eq.label().startsWith(CalicoLabels.NAMESPACE_PREFIX)) {
                        return new Entry(s, eq.label(), eq.value());
                    }
                    first = first == null ? eq : first;
                }
            }
            if (first != null) {
                return new Entry(s, first.label(), first.value());
            }
        }
        return new Entry(s, null, null);
    }

    private void index(S id, Entry e) {
        for (String k : e.selector().labelKeys()) {
            if (!k.equals(e.reqKey())) {
                byKey.computeIfAbsent(k, x -> new HashSet<>()).add(id);
                if (e.reqKey() == null) {
                    byKeyUnrequired.computeIfAbsent(k, x -> new HashSet<>()).add(id);
                }
            }
        }
        if (e.reqKey() != null) {
            byRequired.computeIfAbsent(e.reqKey(), x -> new HashMap<>())
                    .computeIfAbsent(e.reqValue(), x -> new HashSet<>()).add(id);
        } else if (e.selector().matches(Map.of())) {
            matchesEmpty.add(id);
        }
    }

    private void unindex(S id, Entry e) {
        for (String k : e.selector().labelKeys()) {
            remove(byKey, k, id);
            remove(byKeyUnrequired, k, id);
        }
        if (e.reqKey() != null) {
            Map<String, Set<S>> byValue = byRequired.get(e.reqKey());
            remove(byValue, e.reqValue(), id);
            if (byValue.isEmpty()) {
                byRequired.remove(e.reqKey());
            }
        }
        matchesEmpty.remove(id);
    }

    private Collection<K> candidates(Entry e) {
        if (e.reqKey() == null) {
            return labels.keySet();
        }
        Map<String, Set<K>> byValue = itemsByLabel.get(e.reqKey());
        Set<K> items = byValue == null ? null : byValue.get(e.reqValue());
        return items == null ? List.of() : items;
    }

    private void indexItem(K item, Map<String, String> l) {
        l.forEach((k, v) -> itemsByLabel.computeIfAbsent(k, x -> new HashMap<>())
                .computeIfAbsent(v, x -> new HashSet<>()).add(item));
    }

    private void unindexItem(K item, Map<String, String> l) {
        l.forEach((k, v) -> {
            Map<String, Set<K>> byValue = itemsByLabel.get(k);
            if (byValue != null) {
                remove(byValue, v, item);
                if (byValue.isEmpty()) {
                    itemsByLabel.remove(k);
                }
            }
        });
    }
}
