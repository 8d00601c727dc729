package calico.controllers.sync;

import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.model.WorkloadEndpoint;
import calico.controllers.reconcile.Change;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * etcd datastore: Calico's resources that stand for Kubernetes objects, kept equal to those objects as
 * Calico's policy, namespace and service-account controllers keep them (on the Kubernetes datastore
 * they are presented, not stored). {@link #reconcile} makes the stored resources of one kind whose
 * name the controller owns ({@code knp.default.}, {@code kns.}, {@code ksa.}) exactly the desired ones:
 * created, updated when spec, labels or annotations differ, deleted when their object is gone.
 * {@link #workloadEndpointLabels} copies pod labels onto the WorkloadEndpoints the CNI plugin wrote.
 */
public final class ResourceSync {

    private static final Logger LOG = LoggerFactory.getLogger(ResourceSync.class);

    private ResourceSync() {
    }

    /**
     * @param owned   the stored resources this controller owns (by name prefix)
     * @param desired what the Kubernetes objects convert to
     * {@return the writes made}
     */
    public static List<Change> reconcile(Datastore target, ResourceKind kind, Predicate<String> owned, List<Resource> desired) {
        Map<ResourceKey, Resource> have = new HashMap<>();
        for (Resource r : target.list(kind).items()) {
            if (owned.test(r.metadata().name())) {
                have.put(r.key(), r);
            }
        }
        List<Change> out = new ArrayList<>();
        Map<ResourceKey, Resource> want = new HashMap<>();
        desired.forEach(r -> want.put(r.key(), clean(r)));
        for (Resource w : want.values()) {
            Resource h = have.get(w.key());
            try {
                if (h == null) {
                    target.create(w);
                    out.add(new Change.Created(w.key()));
                } else if (!clean(h).equals(w)) {
                    target.update(w.withMetadata(w.metadata().withResourceVersion(h.metadata().resourceVersion())));
                    out.add(new Change.Updated(w.key()));
                }
            } catch (DatastoreException.AlreadyExists | DatastoreException.Conflict | DatastoreException.NotFound e) {
                LOG.info("{} changed meanwhile; next run settles it", w.key());
            } catch (DatastoreException.Invalid e) {
                LOG.warn("{} cannot be stored: {}", w.key(), e.getMessage());
            }
        }
        for (Resource h : have.values()) {
            if (!want.containsKey(h.key())) {
                try {
                    target.delete(h.key(), h.metadata().resourceVersion());
                    out.add(new Change.Deleted(h.key()));
                } catch (DatastoreException.NotFound | DatastoreException.Conflict e) {
                    LOG.info("{} changed or went meanwhile; next run settles it", h.key());
                }
            }
        }
        out.forEach(c -> LOG.info("{} {}", kind.kind(), c));
        return out;
    }

    /**
     * Copies each pod's labels (as its WorkloadEndpoint would carry them) onto the stored Kubernetes
     * WorkloadEndpoints of that pod; nothing else of them changes, and none is created or deleted (the CNI
     * plugin owns them). {@return the WorkloadEndpoints updated}
     */
    public static List<Change> workloadEndpointLabels(Datastore target, List<WorkloadEndpoint> fromPods) {
        Map<String, Map<String, String>> labels = new HashMap<>();
        fromPods.forEach(w -> labels.put(w.metadata().namespace() + "/" + w.spec().pod(), w.metadata().labels()));
        List<Change> out = new ArrayList<>();
        for (Resource r : target.list(ResourceKind.WORKLOAD_ENDPOINT).items()) {
            WorkloadEndpoint w = (WorkloadEndpoint) r;
            if (w.spec() == null || !"k8s".equals(w.spec().orchestrator())) {
                continue;
            }
            Map<String, String> want = labels.get(w.metadata().namespace() + "/" + w.spec().pod());
            if (want == null || want.equals(w.metadata().labels())) {
                continue;
            }
            try {
                target.update(w.withMetadata(w.metadata().withLabels(want)));
                out.add(new Change.Updated(w.key()));
            } catch (DatastoreException.NotFound | DatastoreException.Conflict e) {
                LOG.info("{} changed or went meanwhile; next run settles it", w.key());
            }
        }
        return out;
    }

    /** The resource as the controller writes it: no server-set metadata. */
    private static Resource clean(Resource r) {
        ObjectMeta m = r.metadata();
        return r.withMetadata(new ObjectMeta(m.name(), m.namespace(), null, null, null, null, null, null, m.labels(),
                m.annotations(), null, null));
    }
}
