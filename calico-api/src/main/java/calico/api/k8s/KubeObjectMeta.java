package calico.api.k8s;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.Map;

/**
 * The part of Kubernetes {@code metadata} that the conversions read. Unknown fields
 * ({@code managedFields}, {@code ownerReferences}, ...) are ignored so that any object the
 * API server returns maps onto it; Calico's own {@link calico.api.model.ObjectMeta} stays strict.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record KubeObjectMeta(
        String name,
        String namespace,
        String generateName,
        String uid,
        String resourceVersion,
        String creationTimestamp,
        String deletionTimestamp,
        Map<String, String> labels,
        Map<String, String> annotations) {

    public KubeObjectMeta {
        labels = labels == null ? Map.of() : Map.copyOf(labels);
        annotations = annotations == null ? Map.of() : Map.copyOf(annotations);
    }

    /** {@return metadata with a namespace, a name and labels}, for tests and callers that build objects. */
    public static KubeObjectMeta of(String namespace, String name, Map<String, String> labels) {
        return new KubeObjectMeta(name, namespace, null, null, null, null, null, labels, null);
    }
}
