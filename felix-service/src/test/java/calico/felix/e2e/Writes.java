package calico.felix.e2e;

import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.libcalico.datastore.Datastore;

/** Writing a resource whatever the datastore holds: the e2e tests state what should be, not how to get there. */
final class Writes {

    private Writes() {
    }

    /** Creates {@code r} or overwrites what the datastore holds under its key (name, namespace, labels, annotations, spec). */
    static void upsert(Datastore store, Resource r) {
        ObjectMeta m = r.metadata();
        Resource clean = r.withMetadata(new ObjectMeta(m.name(), m.namespace(), null, null, null, null, null, null,
                m.labels(), m.annotations(), null, null));
        if (store.get(r.key()).isPresent()) {
            store.update(clean);
        } else {
            store.create(clean);
        }
    }
}
