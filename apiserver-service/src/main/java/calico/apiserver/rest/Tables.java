package calico.apiserver.rest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * {@code meta.k8s.io/v1} Table answers. Calico's API server registers no column printers, so
 * kube's default table convertor applies: NAME and CREATED AT, which is what {@code kubectl get}
 * prints for Calico resources.
 */
public final class Tables {

    public static final String MEDIA_TYPE = "application/json;as=Table;v=v1;g=meta.k8s.io";

    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    private Tables() {
    }

    /** Whether the Accept header asks for a Table first (kubectl get sends Table, then plain JSON as fallback). */
    public static boolean wanted(String accept) {
        if (accept == null) {
            return false;
        }
        String first = accept.split(",")[0];
        return first.contains("as=Table") && first.contains("g=meta.k8s.io");
    }

    /**
     * @param objects        the objects (full trees)
     * @param resourceVersion list metadata, may be null
     * @param includeObject  {@code None}, {@code Metadata} (default) or {@code Object}
     */
    public static ObjectNode table(List<? extends JsonNode> objects, String resourceVersion, String continueToken,
                                   String includeObject, boolean withColumns) {
        ObjectNode t = F.objectNode().put("kind", "Table").put("apiVersion", "meta.k8s.io/v1");
        ObjectNode meta = t.putObject("metadata");
        if (resourceVersion != null) {
            meta.put("resourceVersion", resourceVersion);
        }
        if (continueToken != null) {
            meta.put("continue", continueToken);
        }
        ArrayNode cols = t.putArray("columnDefinitions");
        if (withColumns) {
            cols.addObject().put("name", "Name").put("type", "string").put("format", "name")
                    .put("description", "Name must be unique within a namespace. Is required when creating resources, "
                            + "although some resources may allow a client to request the generation of an appropriate "
                            + "name automatically. Name is primarily intended for creation idempotence and configuration "
                            + "definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/"
                            + "working-with-objects/names#names")
                    .put("priority", 0);
            cols.addObject().put("name", "Created At").put("type", "date").put("format", "")
                    .put("description", "CreationTimestamp is a timestamp representing the server time when this "
                            + "object was created. It is not guaranteed to be set in happens-before order across "
                            + "separate operations. Clients may not set this value. It is represented in RFC3339 form "
                            + "and is in UTC.")
                    .put("priority", 0);
        }
        ArrayNode rows = t.putArray("rows");
        for (JsonNode o : objects) {
            ObjectNode row = rows.addObject();
            ArrayNode cells = row.putArray("cells");
            cells.add(o.path("metadata").path("name").asText(""));
            cells.add(o.path("metadata").path("creationTimestamp").asText(""));
            String inc = includeObject == null || includeObject.isEmpty() ? "Metadata" : includeObject;
            if (inc.equals("Object")) {
                row.set("object", o);
            } else if (inc.equals("Metadata")) {
                ObjectNode partial = row.putObject("object");
                partial.put("kind", "PartialObjectMetadata").put("apiVersion", "meta.k8s.io/v1");
                partial.set("metadata", o.path("metadata").deepCopy());
            }
        }
        return t;
    }
}
