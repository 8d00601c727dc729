package calico.felix.app;

import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.syncer.Update;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What felix's stream holds cluster-wide, for Calico's {@code felix_cluster_num_*} gauges: the keys present
 * per kind, fed by the same updates as one calculation graph (on its thread) and read at scrape time. A new
 * stream (a new graph) starts a new one.
 */
final class ClusterCounts {

    /** The kinds counted; Calico counts policies over every tier, Kubernetes' network policies included. */
    private static final List<ResourceKind> KINDS = List.of(ResourceKind.NODE, ResourceKind.WORKLOAD_ENDPOINT,
            ResourceKind.HOST_ENDPOINT, ResourceKind.GLOBAL_NETWORK_POLICY, ResourceKind.NETWORK_POLICY,
            ResourceKind.PROFILE, ResourceKind.TIER);

    private final Map<ResourceKind, Set<ResourceKey>> present = new EnumMap<>(ResourceKind.class);

    ClusterCounts() {
        for (ResourceKind k : KINDS) {
            present.put(k, ConcurrentHashMap.newKeySet());
        }
    }

    void onUpdates(List<Update> updates) {
        for (Update u : updates) {
            Set<ResourceKey> keys = present.get(u.key().kind());
            if (keys == null) {
                continue;
            }
            if (u.value() == null) {
                keys.remove(u.key());
            } else {
                keys.add(u.key());
            }
        }
    }

    int count(ResourceKind kind) {
        Set<ResourceKey> keys = present.get(kind);
        if (keys == null) {
            throw new IllegalArgumentException(kind + " is not counted");
        }
        return keys.size();
    }

    int policies() {
        return count(ResourceKind.GLOBAL_NETWORK_POLICY) + count(ResourceKind.NETWORK_POLICY);
    }
}
