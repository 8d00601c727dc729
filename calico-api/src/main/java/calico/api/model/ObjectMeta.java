package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Map;

/**
 * Kubernetes-style object metadata carried by every {@code projectcalico.org/v3} resource.
 * Only {@code name} is required; the datastore owns {@code resourceVersion}, {@code uid} and
 * {@code creationTimestamp}.
 */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record ObjectMeta(
        String name,
        String namespace,
        String generateName,
        String uid,
        String resourceVersion,
        Long generation,
        String creationTimestamp,
        String deletionTimestamp,
        Map<String, String> labels,
        Map<String, String> annotations,
        List<OwnerReference> ownerReferences,
        List<String> finalizers) {

    public ObjectMeta {
        labels = labels == null ? Map.of() : Map.copyOf(labels);
        annotations = annotations == null ? Map.of() : Map.copyOf(annotations);
        ownerReferences = ownerReferences == null ? List.of() : List.copyOf(ownerReferences);
        finalizers = finalizers == null ? List.of() : List.copyOf(finalizers);
    }

    /** {@return metadata with only a name}, for cluster-scoped resources. */
    public static ObjectMeta named(String name) {
        return new ObjectMeta(name, null, null, null, null, null, null, null, null, null, null, null);
    }

    /** {@return metadata with a namespace and a name}. */
    public static ObjectMeta namespaced(String namespace, String name) {
        return new ObjectMeta(name, namespace, null, null, null, null, null, null, null, null, null, null);
    }

    public ObjectMeta withName(String newName) {
        return new ObjectMeta(newName, namespace, generateName, uid, resourceVersion, generation,
                creationTimestamp, deletionTimestamp, labels, annotations, ownerReferences, finalizers);
    }

    public ObjectMeta withNamespace(String newNamespace) {
        return new ObjectMeta(name, newNamespace, generateName, uid, resourceVersion, generation,
                creationTimestamp, deletionTimestamp, labels, annotations, ownerReferences, finalizers);
    }

    public ObjectMeta withResourceVersion(String newResourceVersion) {
        return new ObjectMeta(name, namespace, generateName, uid, newResourceVersion, generation,
                creationTimestamp, deletionTimestamp, labels, annotations, ownerReferences, finalizers);
    }

    public ObjectMeta withLabels(Map<String, String> newLabels) {
        return new ObjectMeta(name, namespace, generateName, uid, resourceVersion, generation,
                creationTimestamp, deletionTimestamp, newLabels, annotations, ownerReferences, finalizers);
    }

    public ObjectMeta withAnnotations(Map<String, String> newAnnotations) {
        return new ObjectMeta(name, namespace, generateName, uid, resourceVersion, generation,
                creationTimestamp, deletionTimestamp, labels, newAnnotations, ownerReferences, finalizers);
    }

    /** {@return a copy stamped by the datastore on first write}. */
    public ObjectMeta withCreation(String newUid, String newCreationTimestamp) {
        return new ObjectMeta(name, namespace, generateName, newUid, resourceVersion, generation,
                newCreationTimestamp, deletionTimestamp, labels, annotations, ownerReferences, finalizers);
    }

    /** A Kubernetes owner reference; kept so that resources written by controllers round-trip. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record OwnerReference(String apiVersion, String kind, String name, String uid,
                                 Boolean controller, Boolean blockOwnerDeletion) {
    }
}
