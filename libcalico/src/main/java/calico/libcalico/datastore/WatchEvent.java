package calico.libcalico.datastore;

import calico.api.model.Resource;
import calico.api.model.ResourceKey;

/** What a {@link Watch} delivers. The last two variants end the watch. */
public sealed interface WatchEvent {

    /** {@return the datastore revision this event happened at}. */
    long revision();

    /** A resource was created. */
    record Added(Resource resource, long revision) implements WatchEvent {
    }

    /** A resource was updated; {@code previous} is the value before, when the backend knows it. */
    record Modified(Resource resource, Resource previous, long revision) implements WatchEvent {
    }

    /** A resource was deleted; {@code previous} is its last value, when the backend knows it. */
    record Deleted(ResourceKey key, Resource previous, long revision) implements WatchEvent {
    }

    /** Progress: every change up to {@code revision} has been delivered. */
    record Bookmark(long revision) implements WatchEvent {
    }

    /** The requested start revision has been compacted away: list again and watch from there. Ends the watch. */
    record Compacted(long compactRevision, long revision) implements WatchEvent {
    }

    /** The watch broke (backend lost, or an undecodable value); {@code error} says why. Ends the watch. */
    record Failed(DatastoreException error, long revision) implements WatchEvent {
    }
}
