package calico.felix.e2e;

import calico.api.model.ClusterInformation;
import calico.api.model.ClusterInformationSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.Tier;
import calico.api.model.TierSpec;
import calico.libcalico.datastore.Datastore;

/** Writing a resource whatever the datastore holds: the e2e tests state what should be, not how to get there. */
final class Writes {

    private Writes() {
    }

    /**
     * Makes a fresh datastore one felix starts on: ClusterInformation {@code default} with
     * {@code datastoreReady: true} and the {@code default} tier (Calico's installation writes both).
     */
    static void clusterReady(Datastore store) {
        store.create(new ClusterInformation(ObjectMeta.named("default"),
                new ClusterInformationSpec("e2e", "k8s", null, true, null)));
        store.create(new Tier(ObjectMeta.named("default"), new TierSpec(1_000_000.0, null)));
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
