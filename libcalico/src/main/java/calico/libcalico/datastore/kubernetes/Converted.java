package calico.libcalico.datastore.kubernetes;

import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import java.util.List;

/**
 * What one Kubernetes object stands for in Calico's model.
 *
 * @param present the Calico resources the object presents now (usually one)
 * @param absent  keys the object would present in another state but does not now (a finished pod's
 *                endpoint): a watch reports them deleted
 */
record Converted(List<Resource> present, List<ResourceKey> absent) {

    Converted {
        present = List.copyOf(present);
        absent = List.copyOf(absent);
    }

    static Converted of(Resource r) {
        return new Converted(List.of(r), List.of());
    }

    static Converted none() {
        return new Converted(List.of(), List.of());
    }

    static Converted absent(ResourceKey key) {
        return new Converted(List.of(), List.of(key));
    }
}
