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
        List<String> finalizers,
        List<ManagedFieldsEntry> managedFields) {

    public ObjectMeta {
        labels = labels == null ? Map.of() : Map.copyOf(labels);
        annotations = annotations == null ? Map.of() : Map.copyOf(annotations);
        ownerReferences = ownerReferences == null ? List.of() : List.copyOf(ownerReferences);
        finalizers = finalizers == null ? List.of() : List.copyOf(finalizers);
        managedFields = managedFields == null ? List.of() : List.copyOf(managedFields);
    }

    /** Metadata without field ownership (the form every writer but the API server uses). */
    public ObjectMeta(String name, String namespace, String generateName, String uid, String resourceVersion,
                      Long generation, String creationTimestamp, String deletionTimestamp, Map<String, String> labels,
                      Map<String, String> annotations, List<OwnerReference> ownerReferences, List<String> finalizers) {
        this(name, namespace, generateName, uid, resourceVersion, generation, creationTimestamp, deletionTimestamp,
                labels, annotations, ownerReferences, finalizers, null);
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
                creationTimestamp, deletionTimestamp, labels, annotations, ownerReferences, finalizers, managedFields);
    }

    public ObjectMeta withNamespace(String newNamespace) {
        return new ObjectMeta(name, newNamespace, generateName, uid, resourceVersion, generation,
                creationTimestamp, deletionTimestamp, labels, annotations, ownerReferences, finalizers, managedFields);
    }

    public ObjectMeta withResourceVersion(String newResourceVersion) {
        return new ObjectMeta(name, namespace, generateName, uid, newResourceVersion, generation,
                creationTimestamp, deletionTimestamp, labels, annotations, ownerReferences, finalizers, managedFields);
    }

    public ObjectMeta withLabels(Map<String, String> newLabels) {
        return new ObjectMeta(name, namespace, generateName, uid, resourceVersion, generation,
                creationTimestamp, deletionTimestamp, newLabels, annotations, ownerReferences, finalizers, managedFields);
    }

    public ObjectMeta withAnnotations(Map<String, String> newAnnotations) {
        return new ObjectMeta(name, namespace, generateName, uid, resourceVersion, generation,
                creationTimestamp, deletionTimestamp, labels, newAnnotations, ownerReferences, finalizers, managedFields);
    }

    /** {@return a copy stamped by the datastore on first write}. */
    public ObjectMeta withCreation(String newUid, String newCreationTimestamp) {
        return new ObjectMeta(name, namespace, generateName, newUid, resourceVersion, generation,
                newCreationTimestamp, deletionTimestamp, labels, annotations, ownerReferences, finalizers, managedFields);
    }

    public ObjectMeta withManagedFields(List<ManagedFieldsEntry> newManagedFields) {
        return new ObjectMeta(name, namespace, generateName, uid, resourceVersion, generation,
                creationTimestamp, deletionTimestamp, labels, annotations, ownerReferences, finalizers, newManagedFields);
    }

    /**
     * Which fields one manager set, as kube-apiserver records it for server-side apply: the
     * manager's name, {@code Apply} or {@code Update}, the API version, when, and the fields as
     * a {@code FieldsV1} tree ({@code {"f:spec":{"f:nets":{}}}}). Kept as given; the API server
     * maintains it and every backend stores it with the rest of the metadata.
     */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record ManagedFieldsEntry(String manager, String operation, String apiVersion, String time,
                                     String fieldsType, Map<String, Object> fieldsV1, String subresource) {
        public ManagedFieldsEntry {
            fieldsV1 = fieldsV1 == null ? Map.of() : java.util.Collections.unmodifiableMap(
                    new java.util.LinkedHashMap<>(fieldsV1));
        }
    }

    /** A Kubernetes owner reference; kept so that resources written by controllers round-trip. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record OwnerReference(String apiVersion, String kind, String name, String uid,
                                 Boolean controller, Boolean blockOwnerDeletion) {
    }
}
