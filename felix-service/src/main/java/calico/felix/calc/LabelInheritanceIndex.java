package calico.felix.calc;

import calico.api.model.GlobalNetworkSet;
import calico.api.model.HostEndpoint;
import calico.api.model.NetworkSet;
import calico.api.model.Profile;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.model.WorkloadEndpoint;
import calico.libcalico.syncer.Update;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Owns every labelled item of the cluster (workload and host endpoints, network sets) and the
 * profiles' {@code labelsToApply}; reports each item's effective labels when they change.
 *
 * <p>Effective labels: the parents' {@code labelsToApply} in profile order (a later profile
 * wins), then the item's own labels (which win), plus Calico's implicit labels: a namespaced item
 * carries {@code projectcalico.org/namespace} and inherits from its namespace's {@code kns.}
 * profile. A missing profile contributes nothing.
 */
final class LabelInheritanceIndex {

    /** Effective labels of an item, {@code null} when the item is gone (or, for the local listener, no longer local). */
    interface LabelListener {
        void onLabels(ResourceKey item, Map<String, String> labels);
    }

    private record Item(Map<String, String> own, List<String> parents, boolean local) {
    }

    private final String hostname;
    private final LabelListener all;
    private final LabelListener local;
    private final Map<ResourceKey, Item> items = new HashMap<>();
    /** Profile name → labelsToApply, for profiles that exist. */
    private final Map<String, Map<String, String>> profileLabels = new HashMap<>();
    /** Profile name → items naming it as a parent: who to recompute when the profile changes. */
    private final Map<String, Set<ResourceKey>> itemsByParent = new HashMap<>();
    /** Last reported effective labels, to stop no-op updates here. */
    private final Map<ResourceKey, Map<String, String>> effective = new HashMap<>();

    LabelInheritanceIndex(String hostname, LabelListener all, LabelListener local) {
        this.hostname = hostname;
        this.all = all;
        this.local = local;
    }

    void registerWith(Dispatcher d) {
        d.register(ResourceKind.WORKLOAD_ENDPOINT, this::onItem);
        d.register(ResourceKind.HOST_ENDPOINT, this::onItem);
        d.register(ResourceKind.NETWORK_SET, this::onItem);
        d.register(ResourceKind.GLOBAL_NETWORK_SET, this::onItem);
        d.register(ResourceKind.PROFILE, this::onProfile);
    }

    private void onItem(Update u) {
        ResourceKey key = u.key();
        Item old = items.get(key);
        Item now = u.value() == null ? null : item(u);
        if (Objects.equals(old, now)) {
            return;
        }
        if (old != null) {
            old.parents().forEach(p -> {
                Set<ResourceKey> s = itemsByParent.get(p);
                if (s != null && s.remove(key) && s.isEmpty()) {
                    itemsByParent.remove(p);
                }
            });
        }
        if (now == null) {
            items.remove(key);
            effective.remove(key);
            all.onLabels(key, null);
            if (old.local()) {
                local.onLabels(key, null);
            }
            return;
        }
        items.put(key, now);
        now.parents().forEach(p -> itemsByParent.computeIfAbsent(p, x -> new HashSet<>()).add(key));
        boolean movedAway = old != null && old.local() && !now.local();
        boolean movedHere = now.local() && (old == null || !old.local());
        recompute(key, now, movedHere);
        if (movedAway) {
            local.onLabels(key, null);
        }
    }

    private void onProfile(Update u) {
        String name = u.key().name();
        Map<String, String> labels = u.value() == null ? null : ((Profile) u.value()).spec() == null ? Map.of()
                : ((Profile) u.value()).spec().labelsToApply();
        if (Objects.equals(profileLabels.get(name), labels)) {
            return;
        }
        if (labels == null) {
            profileLabels.remove(name);
        } else {
            profileLabels.put(name, labels);
        }
        for (ResourceKey key : List.copyOf(itemsByParent.getOrDefault(name, Set.of()))) {
            recompute(key, items.get(key), false);
        }
    }

    private void recompute(ResourceKey key, Item item, boolean forceLocal) {
        Map<String, String> labels = new HashMap<>();
        for (String p : item.parents()) {
            Map<String, String> l = profileLabels.get(p);
            if (l != null) {
                labels.putAll(l);
            }
        }
        labels.putAll(item.own());
        Map<String, String> eff = Map.copyOf(labels);
        boolean changed = !eff.equals(effective.get(key));
        if (changed) {
            effective.put(key, eff);
            all.onLabels(key, eff);
        }
        if (item.local() && (changed || forceLocal)) {
            local.onLabels(key, eff);
        }
    }

    private Item item(Update u) {
        if (u.value() instanceof WorkloadEndpoint w) {
            Map<String, String> own = new HashMap<>(w.metadata().labels());
            String ns = w.metadata().namespace();
            own.put(CalicoLabels.NAMESPACE, ns);
            if (w.spec() != null && !CalicoLabels.blank(w.spec().orchestrator())) {
                own.put(CalicoLabels.ORCHESTRATOR, w.spec().orchestrator());
            }
            List<String> parents = w.spec() == null ? List.of() : w.spec().profiles();
            return new Item(Map.copyOf(own), parents, w.spec() != null && hostname.equals(w.spec().node()));
        } else if (u.value() instanceof HostEndpoint h) {
            return new Item(h.metadata().labels(), h.spec() == null ? List.of() : h.spec().profiles(),
                    h.spec() != null && hostname.equals(h.spec().node()));
        } else if (u.value() instanceof NetworkSet n) {
            Map<String, String> own = new HashMap<>(n.metadata().labels());
            own.put(CalicoLabels.NAMESPACE, n.metadata().namespace());
            return new Item(Map.copyOf(own), List.of(CalicoLabels.NAMESPACE_PROFILE_PREFIX + n.metadata().namespace()),
                    false);
        } else if (u.value() instanceof GlobalNetworkSet g) {
            return new Item(g.metadata().labels(), List.of(), false);
        }
        throw new IllegalArgumentException("not a labelled item: " + u.key());
    }
}
