package calico.libcalico.syncer;

import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import java.util.Objects;

/**
 * One change delivered by a syncer.
 *
 * @param key      the resource's kind, namespace and name
 * @param value    the resource as stored, or {@code null} when it was deleted
 * @param revision the datastore revision of the value (its resourceVersion); for a deletion the
 *                 revision at which it was observed: the delete itself, or the list that no
 *                 longer contained the key after a resync
 * @param type     {@code NEW}/{@code UPDATED} carry a value, {@code DELETED} does not
 */
public record Update(ResourceKey key, Resource value, long revision, UpdateType type) {

    public Update {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(type, "type");
        if ((type == UpdateType.DELETED) != (value == null)) {
            throw new IllegalArgumentException("update " + type + " of " + key
                    + (value == null ? " needs a value" : " must not carry a value"));
        }
        if (value != null && !value.key().equals(key)) {
            throw new IllegalArgumentException("value " + value.key() + " does not match key " + key);
        }
    }

    public static Update of(UpdateType type, Resource value, long revision) {
        return new Update(value.key(), value, revision, type);
    }

    public static Update deleted(ResourceKey key, long revision) {
        return new Update(key, null, revision, UpdateType.DELETED);
    }
}
