package calico.libcalico.syncer;

import calico.api.model.ResourceKind;
import java.util.List;

/** What a {@link WatcherCache} hands to the dispatch thread, in the order it happened. */
sealed interface CacheResult {

    /** Changes to the cache's kind, in order; never empty. */
    record Updates(List<Update> updates) implements CacheResult {
        public Updates {
            updates = List.copyOf(updates);
        }
    }

    /** The kind's initial snapshot has been handed over (sent once per cache, after it). */
    record Synced(ResourceKind kind) implements CacheResult {
    }
}
