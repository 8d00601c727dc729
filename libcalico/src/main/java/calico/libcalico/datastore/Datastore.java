package calico.libcalico.datastore;

import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import java.util.Optional;

/**
 * A client of Calico's datastore (backends: {@code etcdv3}, {@code memory}, {@code kubernetes},
 * {@code apiserver}). Every write is defaulted and validated first, so an invalid resource is never stored.
 *
 * <p>Concurrency: {@code metadata.resourceVersion} is the revision at which the resource was
 * last written. An update or delete that carries one succeeds only if it is still current
 * ({@link DatastoreException.Conflict} otherwise); an update without one overwrites.
 *
 * <p>Failures are {@link DatastoreException}s: {@code NotFound}, {@code AlreadyExists},
 * {@code Conflict}, {@code Compacted}, {@code Invalid}, {@code Denied} (credentials refused), or
 * {@code Unavailable} (retryable: the backend did not answer in time). Implementations are thread-safe.
 */
public interface Datastore extends AutoCloseable {

    /** {@return the resource, or empty when it does not exist}. */
    Optional<Resource> get(ResourceKey key);

    /**
     * Lists resources of one kind.
     *
     * @param kind          the kind
     * @param namespace     for namespaced kinds, one namespace, or {@code null} for all
     * @param labelSelector a Calico selector over {@code metadata.labels}, or {@code null} for all
     * @return the matching resources sorted by namespace then name, and the revision they were read at
     */
    ListResult list(ResourceKind kind, String namespace, String labelSelector);

    default ListResult list(ResourceKind kind) {
        return list(kind, null, null);
    }

    /**
     * Lists resources of one kind as they were at an earlier revision: a consistent snapshot, so
     * that a list read in pages sees no write made after its first page.
     *
     * <p>The default, for backends that keep no history, can only answer for the current
     * revision; {@code etcdv3} reads the revision natively and {@code memory} rolls its history
     * log back.
     *
     * @param revision a revision this datastore reported (a {@link ListResult#revision()})
     * @return the matching resources at {@code revision}, sorted by namespace then name, with {@code revision}
     * @throws DatastoreException.Compacted if the datastore no longer holds that revision
     */
    default ListResult listAt(ResourceKind kind, String namespace, String labelSelector, long revision) {
        ListResult now = list(kind, namespace, labelSelector);
        if (now.revision() == revision) {
            return now;
        }
        throw new DatastoreException.Compacted(revision, now.revision());
    }

    /** Creates a resource that must not exist yet; returns it as stored (uid, timestamp, resourceVersion). */
    Resource create(Resource resource);

    /** Replaces an existing resource; see the class comment for the resourceVersion rule. */
    Resource update(Resource resource);

    /**
     * Writes a resource's status: for a kind with a {@link ResourceKind#statusSubresource() status
     * subresource}, backends that have one (kubernetes) write the status only and keep the stored
     * spec; elsewhere (etcd, memory) this is {@link #update}, as Calico writes it there. Same
     * resourceVersion rule as {@link #update}.
     */
    default Resource updateStatus(Resource resource) {
        return update(resource);
    }

    /**
     * Deletes a resource.
     *
     * @param resourceVersion if not {@code null}, delete only if the resource is still at this version
     * @return the resource as it was before deletion
     */
    Resource delete(ResourceKey key, String resourceVersion);

    /**
     * Watches one kind (optionally one namespace) from a revision. Events are delivered in
     * revision order on one thread per watch. With {@code fromRevision} 0 the watch starts at
     * the current revision (no history). A watch whose start revision has been compacted ends
     * with {@link WatchEvent.Compacted}; a watch that loses its backend ends with
     * {@link WatchEvent.Failed}. Nothing is delivered after either, nor after {@link Watch#close()}.
     *
     * @param fromRevision deliver events with revision strictly greater than this; 0 for "from now"
     */
    Watch watch(ResourceKind kind, String namespace, long fromRevision, WatchListener listener);

    /** {@return the datastore's current revision}. */
    long currentRevision();

    /**
     * {@return whether this backend can hold resources of {@code kind}}. A
     * {@link ResourceKind#kubernetesOnly() Kubernetes-only} kind exists only on the kubernetes
     * datastore; elsewhere it is always empty, so a syncer does not watch it.
     */
    default boolean presents(ResourceKind kind) {
        return !kind.kubernetesOnly();
    }

    /**
     * Writes felix's status report for {@code node} ({@link FelixStatusReport}), the live copy expiring after
     * {@code ttl}. {@return whether this backend keeps such reports}: the default, as Calico's kubernetes
     * backend, drops them (false); etcd stores them.
     */
    default boolean reportFelixStatus(String node, FelixStatusReport report, java.time.Duration ttl) {
        return false;
    }

    @Override
    void close();
}
