package calico.libcalico.datastore.memory;

import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.libcalico.datastore.WatchEvent;

/**
 * One write in the memory datastore's history: the key, the value after it ({@code null} for a
 * delete) and the value before it ({@code null} for a create).
 */
record Change(long revision, ResourceKey key, Resource value, Resource previous) {

    WatchEvent toEvent() {
        if (value == null) {
            return new WatchEvent.Deleted(key, previous, revision);
        }
        if (previous == null) {
            return new WatchEvent.Added(value, revision);
        }
        return new WatchEvent.Modified(value, previous, revision);
    }
}
