package calico.libcalico.datastore.kubernetes;

import calico.api.codec.ResourceCodec;
import calico.api.crd.CustomResourceDefinitions;
import calico.api.k8s.DerivedUid;
import calico.api.model.Resource;
import calico.api.model.ResourceKind;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;

/**
 * Calico resources as Calico's own custom resources: group {@code crd.projectcalico.org},
 * version {@code v1}, the plural of the v3 kind, the v3 scope, and the v3 {@code spec} (and
 * {@code status}) unchanged. Metadata is split as Calico splits it:
 *
 * <ul>
 *   <li>on the custom resource itself: name, namespace, resourceVersion, labels, annotations;</li>
 *   <li>the UID of the custom resource is {@link DerivedUid} of the Calico UID (and back: the
 *       derivation is its own inverse), so the two objects never share a UID;</li>
 *   <li>every other Calico metadata field (creationTimestamp, generateName, ownerReferences, ...)
 *       as JSON in the annotation {@value #METADATA_ANNOTATION}.</li>
 * </ul>
 */
final class CrdCodec {

    static final String GROUP = CustomResourceDefinitions.GROUP;
    static final String VERSION = CustomResourceDefinitions.VERSION;
    static final String API_VERSION = GROUP + "/" + VERSION;
    static final String METADATA_ANNOTATION = "projectcalico.org/metadata";

    /** Metadata fields kept on the custom resource itself; everything else goes to the annotation. */
    private static final Set<String> ON_THE_OBJECT = Set.of("name", "namespace", "resourceVersion", "labels",
            "annotations", "uid");
    /** Calico ObjectMeta fields that may come back from the annotation. */
    private static final Set<String> FROM_ANNOTATION = Set.of("generateName", "generation", "creationTimestamp",
            "deletionTimestamp", "ownerReferences", "finalizers", "managedFields");

    private final ResourceCodec codec = ResourceCodec.get();

    /** {@return where the custom resources of {@code kind} live}. */
    static ResourceDefinitionContext context(ResourceKind kind) {
        return new ResourceDefinitionContext.Builder()
                .withGroup(GROUP).withVersion(VERSION)
                .withKind(crdKind(kind)).withPlural(kind.plural())
                .withNamespaced(kind.namespaced())
                .build();
    }

    /** {@return the kind of the custom resource} (calico-api's {@link CustomResourceDefinitions#kind}). */
    static String crdKind(ResourceKind kind) {
        return CustomResourceDefinitions.kind(kind);
    }

    /**
     * {@return the custom resource for {@code r}}, as JSON.
     *
     * @param crUid the UID of the existing custom resource (updates), or null
     */
    ObjectNode toCustomResource(Resource r, String crUid) {
        ObjectNode tree = (ObjectNode) codec.toTree(r);
        tree.put("apiVersion", API_VERSION);
        tree.put("kind", crdKind(r.resourceKind()));
        ObjectNode calicoMeta = (ObjectNode) tree.get("metadata");
        ObjectNode meta = tree.objectNode();
        ObjectNode rest = tree.objectNode();
        for (Iterator<Map.Entry<String, JsonNode>> it = calicoMeta.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> f = it.next();
            (ON_THE_OBJECT.contains(f.getKey()) ? meta : rest).set(f.getKey(), f.getValue());
        }
        meta.remove("uid");
        if (crUid != null) {
            meta.put("uid", crUid);
        }
        if (!rest.isEmpty()) {
            ObjectNode annotations = meta.has("annotations") ? (ObjectNode) meta.get("annotations") : meta.putObject("annotations");
            annotations.put(METADATA_ANNOTATION, rest.toString());
        }
        tree.set("metadata", meta);
        return tree;
    }

    /**
     * {@return the Calico resource stored in a custom resource}
     *
     * @throws calico.api.codec.ResourceParseException when the object does not decode, naming the field
     */
    Resource fromCustomResource(ResourceKind kind, JsonNode cr) {
        ObjectNode out = codec.jsonMapper().createObjectNode();
        out.put("apiVersion", Resource.API_VERSION);
        out.put("kind", kind.kind());
        JsonNode crMeta = cr.path("metadata");
        ObjectNode meta = out.putObject("metadata");
        String annotation = crMeta.path("annotations").path(METADATA_ANNOTATION).asText("");
        if (!annotation.isEmpty()) {
            try {
                JsonNode stored = codec.jsonMapper().readTree(annotation);
                stored.fields().forEachRemaining(f -> {
                    if (FROM_ANNOTATION.contains(f.getKey())) {
                        meta.set(f.getKey(), f.getValue());
                    }
                });
            } catch (JsonProcessingException e) {
                throw new calico.api.codec.ResourceParseException("metadata.annotations[" + METADATA_ANNOTATION + "]",
                        "is not JSON: " + e.getOriginalMessage());
            }
        }
        copyText(crMeta, meta, "name");
        copyText(crMeta, meta, "namespace");
        copyText(crMeta, meta, "resourceVersion");
        String crUid = crMeta.path("uid").asText("");
        if (!crUid.isEmpty()) {
            try {
                meta.put("uid", DerivedUid.of(crUid));
            } catch (IllegalArgumentException notAUuid) {
                meta.put("uid", crUid); // not written by an API server; keep what is there
            }
        }
        if (!meta.has("creationTimestamp")) {
            copyText(crMeta, meta, "creationTimestamp");
        }
        if (crMeta.path("labels").isObject() && !crMeta.path("labels").isEmpty()) {
            meta.set("labels", crMeta.get("labels"));
        }
        if (crMeta.path("annotations").isObject()) {
            ObjectNode annotations = ((ObjectNode) crMeta.get("annotations")).deepCopy();
            annotations.remove(METADATA_ANNOTATION);
            if (!annotations.isEmpty()) {
                meta.set("annotations", annotations);
            }
        }
        for (String field : new String[] {"spec", "status"}) {
            if (cr.has(field) && !cr.get(field).isNull()) {
                out.set(field, cr.get(field));
            }
        }
        return codec.read(kind, out.toString().getBytes(StandardCharsets.UTF_8));
    }

    private static void copyText(JsonNode from, ObjectNode to, String field) {
        JsonNode v = from.get(field);
        if (v != null && v.isTextual() && !v.asText().isEmpty()) {
            to.put(field, v.asText());
        }
    }
}
