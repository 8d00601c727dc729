package calico.apiserver.openapi;

import calico.api.model.ResourceKind;
import calico.api.schema.ModelSchemas;
import calico.apiserver.discovery.KindCatalog;
import calico.apiserver.discovery.Discovery;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * OpenAPI v2 and v3 documents generated from the calico-api records (calico-api's
 * {@link ModelSchemas}: Jackson's view of them, so the field names are exactly the codec's).
 * What kubectl needs from them:
 * <ul>
 *   <li>component schemas with {@code x-kubernetes-group-version-kind} for {@code kubectl explain}
 *       and for computing client-side apply patches;</li>
 *   <li>PATCH operations tagged with the kind that list the {@code fieldValidation} parameter
 *       (so kubectl leaves field validation to the server) and the accepted patch media types
 *       (strategic merge included: kubectl apply then sends strategic merge patches).</li>
 * </ul>
 * Both documents are built once; they only change when the model does.
 */
public final class OpenApi {

    private static final JsonNodeFactory F = JsonNodeFactory.instance;
    private static final String MODEL_PREFIX = ModelSchemas.MODEL_PREFIX;
    private static final String META = ModelSchemas.META;
    private static final List<String> PATCH_TYPES = List.of("application/json-patch+json",
            "application/merge-patch+json", "application/strategic-merge-patch+json", "application/apply-patch+yaml");

    private final ModelSchemas schemas = new ModelSchemas();
    private final ObjectNode v2;
    private final ObjectNode v3;
    private final ObjectNode v3Index;

    public OpenApi() {
        this.v3 = build(true);
        this.v2 = build(false);
        String hash;
        try {
            byte[] d = MessageDigest.getInstance("SHA-512").digest(v3.toString().getBytes(StandardCharsets.UTF_8));
            hash = HexFormat.of().formatHex(d).substring(0, 128).toUpperCase(java.util.Locale.ROOT);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        this.v3Index = F.objectNode();
        v3Index.putObject("paths").putObject("apis/" + Discovery.GROUP_VERSION)
                .put("serverRelativeURL", "/openapi/v3/apis/" + Discovery.GROUP_VERSION + "?hash=" + hash);
    }

    public ObjectNode v2() {
        return v2;
    }

    public ObjectNode v3() {
        return v3;
    }

    public ObjectNode v3Index() {
        return v3Index;
    }

    private ObjectNode build(boolean openApi3) {
        ObjectNode doc = F.objectNode();
        String refBase;
        ObjectNode defs;
        if (openApi3) {
            doc.put("openapi", "3.0.0");
            doc.putObject("info").put("title", "Calico").put("version", "v3");
            defs = F.objectNode();
            doc.putObject("components").set("schemas", defs);
            refBase = "#/components/schemas/";
        } else {
            doc.put("swagger", "2.0");
            doc.putObject("info").put("title", "Calico").put("version", "v3");
            defs = F.objectNode();
            refBase = "#/definitions/";
        }
        ObjectNode paths = doc.putObject("paths");
        Generator gen = new Generator(defs, refBase);
        defs.set(META + "Patch", F.objectNode().put("type", "object")
                .put("description", "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body."));
        defs.set(META + "Status", F.objectNode().put("type", "object")
                .put("description", "Status is a return value for calls that don't return other objects."));
        for (ResourceKind k : KindCatalog.kinds()) {
            String name = gen.resource(k);
            String list = gen.list(k, name);
            addPaths(paths, k, refBase + name, refBase + list, openApi3);
        }
        if (!openApi3) {
            defs.forEach(OpenApi::withoutNullable);
            doc.set("definitions", defs);
        }
        return doc;
    }

    /**
     * OpenAPI v2 has no {@code nullable}: kube-apiserver turns its merged v2 document into
     * protobuf (gnostic), which refuses the keyword, and then answers every protobuf request for
     * {@code /openapi/v2} with 503, breaking kubectl's validation cluster-wide. As kube's own v2
     * conversion of CRD schemas does, a nullable schema becomes untyped (no type, items or properties).
     */
    private static void withoutNullable(JsonNode node) {
        if (node instanceof ObjectNode o) {
            if (o.path("nullable").isBoolean()) {
                if (o.path("nullable").asBoolean()) {
                    o.remove(List.of("type", "items", "properties"));
                }
                o.remove("nullable");
            }
            o.forEach(OpenApi::withoutNullable);
        } else if (node instanceof ArrayNode a) {
            a.forEach(OpenApi::withoutNullable);
        }
    }

    private void addPaths(ObjectNode paths, ResourceKind k, String ref, String listRef, boolean v3) {
        String base = "/apis/" + Discovery.GROUP_VERSION + (k.namespaced() ? "/namespaces/{namespace}/" : "/") + k.plural();
        ObjectNode collection = paths.putObject(base);
        ObjectNode item = paths.putObject(base + "/{name}");
        collection.set("get", op(k, "list", "list", listRef, null, v3, false));
        collection.set("post", op(k, "post", "create", ref, List.of("application/json", "application/yaml"), v3, true));
        collection.set("delete", op(k, "deletecollection", "deletecollection", refBaseStatus(v3), null, v3, false));
        item.set("get", op(k, "get", "read", ref, null, v3, false));
        item.set("put", op(k, "put", "replace", ref, List.of("application/json", "application/yaml"), v3, true));
        item.set("patch", op(k, "patch", "patch", ref, PATCH_TYPES, v3, true));
        item.set("delete", op(k, "delete", "delete", ref, null, v3, false));
        ArrayNode params = item.putArray("parameters");
        params.add(pathParam("name", v3));
        if (k.namespaced()) {
            params.add(pathParam("namespace", v3));
            collection.putArray("parameters").add(pathParam("namespace", v3));
            ObjectNode all = paths.putObject("/apis/" + Discovery.GROUP_VERSION + "/" + k.plural());
            all.set("get", op(k, "list", "list", listRef, null, v3, false));
        }
    }

    private static String refBaseStatus(boolean v3) {
        return (v3 ? "#/components/schemas/" : "#/definitions/") + META + "Status";
    }

    private ObjectNode pathParam(String name, boolean v3) {
        ObjectNode p = F.objectNode().put("name", name).put("in", "path").put("required", true)
                .put("description", name + " of the object");
        if (v3) {
            p.putObject("schema").put("type", "string").put("uniqueItems", true);
        } else {
            p.put("type", "string").put("uniqueItems", true);
        }
        return p;
    }

    private ObjectNode op(ResourceKind k, String action, String verbWord, String responseRef, List<String> bodyTypes,
                          boolean v3, boolean writes) {
        ObjectNode op = F.objectNode();
        op.put("operationId", verbWord + "ProjectcalicoOrgV3" + (k.namespaced() ? "Namespaced" : "") + k.kind());
        op.put("x-kubernetes-action", action);
        op.putObject("x-kubernetes-group-version-kind").put("group", Discovery.GROUP).put("version", Discovery.VERSION)
                .put("kind", k.kind());
        ArrayNode params = op.putArray("parameters");
        if (writes) {
            params.add(queryParam("dryRun", "When present, indicates that modifications should not be persisted.", v3));
            params.add(queryParam("fieldManager", "a name associated with the actor or entity that is making these changes.", v3));
            params.add(queryParam("fieldValidation", "instructs the server on how to handle objects in the request "
                    + "(POST/PUT/PATCH) containing unknown or duplicate fields: Ignore, Warn or Strict.", v3));
        }
        if (action.equals("patch")) {
            params.add(queryParam("force", "Force is going to \"force\" Apply requests.", v3));
        }
        if (bodyTypes != null) {
            String bodyRef = action.equals("patch") ? (v3 ? "#/components/schemas/" : "#/definitions/") + META + "Patch"
                    : responseRef;
            if (v3) {
                ObjectNode content = op.putObject("requestBody").put("required", true).putObject("content");
                for (String t : bodyTypes) {
                    content.putObject(t).putObject("schema").put("$ref", bodyRef);
                }
            } else {
                ArrayNode consumes = op.putArray("consumes");
                bodyTypes.forEach(consumes::add);
                params.addObject().put("name", "body").put("in", "body").put("required", true)
                        .putObject("schema").put("$ref", bodyRef);
            }
        }
        ObjectNode ok = op.putObject("responses").putObject("200").put("description", "OK");
        if (v3) {
            ok.putObject("content").putObject("application/json").putObject("schema").put("$ref", responseRef);
        } else {
            ok.putObject("schema").put("$ref", responseRef);
        }
        return op;
    }

    private ObjectNode queryParam(String name, String description, boolean v3) {
        ObjectNode p = F.objectNode().put("name", name).put("in", "query").put("description", description);
        if (v3) {
            p.putObject("schema").put("type", name.equals("force") ? "boolean" : "string").put("uniqueItems", true);
        } else {
            p.put("type", name.equals("force") ? "boolean" : "string").put("uniqueItems", true);
        }
        return p;
    }

    /** One definition per record type, referred to with {@code $ref}. */
    private final class Generator implements ModelSchemas.Records {
        private final ObjectNode defs;
        private final String refBase;

        Generator(ObjectNode defs, String refBase) {
            this.defs = defs;
            this.refBase = refBase;
        }

        String resource(ResourceKind k) {
            String name = MODEL_PREFIX + k.kind();
            ObjectNode s = schemas.record(k.type(), this);
            ObjectNode props = (ObjectNode) s.get("properties");
            props.set("apiVersion", F.objectNode().put("type", "string").put("description",
                    "APIVersion defines the versioned schema of this representation of an object."));
            props.set("kind", F.objectNode().put("type", "string").put("description",
                    "Kind is a string value representing the REST resource this object represents."));
            if (!s.has("description")) {
                s.put("description", k.kind() + " is a projectcalico.org/v3 resource.");
            }
            gvk(s, k.kind());
            defs.set(name, s);
            return name;
        }

        String list(ResourceKind k, String itemName) {
            String name = MODEL_PREFIX + k.listKind();
            ObjectNode s = F.objectNode().put("type", "object").put("description", k.listKind() + " is a list of " + k.kind());
            ObjectNode props = s.putObject("properties");
            props.putObject("apiVersion").put("type", "string");
            props.putObject("kind").put("type", "string");
            props.putObject("metadata").put("type", "object");
            props.putObject("items").put("type", "array").putObject("items").put("$ref", refBase + itemName);
            s.putArray("required").add("items");
            gvk(s, k.listKind());
            defs.set(name, s);
            return name;
        }

        private void gvk(ObjectNode s, String kind) {
            s.putArray("x-kubernetes-group-version-kind").addObject().put("group", Discovery.GROUP)
                    .put("kind", kind).put("version", Discovery.VERSION);
        }

        @Override
        public JsonNode use(String name, Supplier<ObjectNode> body) {
            if (!defs.has(name)) {
                defs.putNull(name); // taken while its body is built: a recursive type refers to it
                defs.set(name, body.get());
            }
            return F.objectNode().put("$ref", refBase + name);
        }

        /**
         * A reference cannot carry siblings in OpenAPI v3, so there the reference goes into an
         * {@code allOf} (as kube-apiserver's own documents do); in v2 the description sits beside
         * the {@code $ref}.
         */
        @Override
        public JsonNode describe(JsonNode schema, String description) {
            ObjectNode out;
            if (schema.has("$ref") && refBase.startsWith("#/components/")) {
                out = F.objectNode();
                out.putArray("allOf").add(schema);
            } else {
                out = ((ObjectNode) schema).deepCopy();
            }
            out.put("description", description);
            return out;
        }
    }

    /** For tests: every kind's definition name. */
    public static Map<ResourceKind, String> definitionNames() {
        java.util.EnumMap<ResourceKind, String> m = new java.util.EnumMap<>(ResourceKind.class);
        for (ResourceKind k : KindCatalog.kinds()) {
            m.put(k, MODEL_PREFIX + k.kind());
        }
        return m;
    }
}
