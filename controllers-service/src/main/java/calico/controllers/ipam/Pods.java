package calico.controllers.ipam;

import java.util.Map;
import java.util.Optional;

/** The Kubernetes Pods, read from the API server (fabric8 in the application, a real cluster in tests). */
public interface Pods {

    /** {@return every Pod, keyed {@code <namespace>/<name>}} */
    Map<String, PodView> all();

    /** {@return the Pod as it is now}: the last look before an address is released. */
    Optional<PodView> get(String namespace, String name);

    static String key(String namespace, String name) {
        return namespace + "/" + name;
    }
}
