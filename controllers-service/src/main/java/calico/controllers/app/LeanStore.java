package calico.controllers.app;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;
import io.fabric8.kubernetes.client.informers.cache.ReducedStateItemStore;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

/**
 * Informer stores that keep only the fields a run reads, not whole objects: a cluster's pods carry their
 * containers, managed fields and conditions, which the node controller never looks at and which would
 * otherwise be most of its heap. Restored objects hold the namespace, name, resource version and the
 * fields listed here; anything else reads as absent, so a field a run starts to read must be added here
 * ({@code LeanStoreTest} compares views of a full and a restored object).
 */
final class LeanStore {

    /** What {@link KubernetesPods#view} reads. */
    static final String[] POD_FIELDS = {"metadata.annotations", "spec.nodeName", "status.podIP", "status.podIPs",
            "status.phase"};

    /** What {@link KubernetesServices#view} reads. */
    static final String[] SERVICE_FIELDS = {"metadata.uid", "metadata.annotations", "spec.type", "spec.ipFamilies",
            "status.loadBalancer.ingress"};

    private LeanStore() {
    }

    static ItemStore<Pod> pods(KubernetesSerialization json) {
        return new ReducedStateItemStore<>(ReducedStateItemStore.NAME_KEY_STATE, Pod.class,
                json, POD_FIELDS);
    }

    static ItemStore<Service> services(KubernetesSerialization json) {
        return new ReducedStateItemStore<>(ReducedStateItemStore.NAME_KEY_STATE, Service.class,
                json, SERVICE_FIELDS);
    }
}
