package calico.apiserver.rest;

import calico.api.codec.ResourceCodec;
import calico.api.codec.ResourceParseException;
import calico.api.model.Resource;
import calico.api.model.ResourceKind;
import calico.apiserver.errors.ApiException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns request bodies into resources and resources into response trees. Decoding follows
 * kube-apiserver: a body that is not JSON/YAML, a foreign apiVersion or kind is a 400; unknown
 * fields are a 400 under {@code fieldValidation=Strict} (kubectl's default), dropped with a
 * warning under {@code Warn}, dropped silently under {@code Ignore}.
 */
public final class ObjectCodec {

    /** metadata fields Kubernetes clients send that the Calico model does not keep. */
    private static final List<String> IGNORED_METADATA = List.of("selfLink", "deletionGracePeriodSeconds");

    private final ResourceCodec codec = ResourceCodec.get();
    private final ObjectMapper json = codec.jsonMapper();
    private final YAMLMapper yaml = new YAMLMapper();

    public ObjectMapper json() {
        return json;
    }

    /** {@return the body as an object tree}: JSON, or YAML when the content type says so. */
    public ObjectNode readTree(byte[] body, String contentType) {
        JsonNode node;
        try {
            boolean isYaml = contentType != null && contentType.contains("yaml");
            node = isYaml ? yaml.readTree(body) : json.readTree(body);
        } catch (IOException e) {
            String msg = e.getMessage() == null ? "" : e.getMessage().split("\n")[0];
            throw ApiException.badRequest("couldn't get version/kind; json parse error: " + msg);
        }
        if (node == null || node.isMissingNode() || node.isNull()) {
            throw ApiException.badRequest("Object 'Kind' is missing in ''");
        }
        if (!node.isObject()) {
            throw ApiException.badRequest("couldn't get version/kind; json parse error: json: cannot unmarshal "
                    + (node.isArray() ? "array" : "string") + " into Go value of type struct { APIVersion string "
                    + "\"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }");
        }
        return (ObjectNode) node;
    }

    /**
     * {@return the resource the tree describes}, which must be of {@code kind}.
     *
     * @param warnings receives the unknown-field warnings under {@code Warn}
     */
    public Resource toResource(ObjectNode tree, ResourceKind kind, FieldValidation validation, List<String> warnings) {
        String apiVersion = tree.path("apiVersion").asText("");
        String k = tree.path("kind").asText("");
        if (k.isEmpty()) {
            throw ApiException.badRequest("Object 'Kind' is missing in '" + compact(tree) + "'");
        }
        if (!apiVersion.equals(Resource.API_VERSION)) {
            throw ApiException.badRequest("the API version in the data (" + apiVersion
                    + ") does not match the expected API version (" + Resource.API_VERSION + ")");
        }
        if (!k.equals(kind.kind())) {
            throw ApiException.badRequest("the kind in the data (" + k + ") does not match the expected kind ("
                    + kind.kind() + ")");
        }
        ObjectNode body = tree.deepCopy();
        if (body.get("metadata") instanceof ObjectNode meta) {
            IGNORED_METADATA.forEach(meta::remove);
        }
        List<String> unknown = new ArrayList<>();
        for (int attempt = 0; ; attempt++) {
            try {
                Resource r = codec.fromTree(body, "").get(0);
                if (!unknown.isEmpty()) {
                    if (validation == FieldValidation.STRICT) {
                        throw ApiException.badRequest("strict decoding error: " + String.join(", ",
                                unknown.stream().map(f -> "unknown field \"" + f + "\"").toList()));
                    }
                    if (validation == FieldValidation.WARN) {
                        unknown.forEach(f -> warnings.add("unknown field \"" + f + "\""));
                    }
                }
                return r;
            } catch (ResourceParseException e) {
                if ("unknown field".equals(e.reason()) && attempt < 100 && remove(body, e.field())) {
                    unknown.add(e.field());
                    continue;
                }
                if (!unknown.isEmpty() && validation == FieldValidation.STRICT) {
                    throw ApiException.badRequest("strict decoding error: " + String.join(", ",
                            unknown.stream().map(f -> "unknown field \"" + f + "\"").toList()));
                }
                String name = tree.path("metadata").path("name").asText("");
                if (e.field().isEmpty()) {
                    throw ApiException.badRequest(e.getMessage());
                }
                throw ApiException.invalid(kind, name, List.of(new ApiException.Cause("FieldValueInvalid",
                        "Invalid value: " + e.reason(), e.field())));
            }
        }
    }

    /** Removes the field at a codec path ({@code spec.ingress[0].foo}); false when it cannot be found. */
    static boolean remove(ObjectNode root, String path) {
        List<Object> steps = new ArrayList<>();
        for (String part : path.split("\\.")) {
            int b = part.indexOf('[');
            steps.add(b < 0 ? part : part.substring(0, b));
            while (b >= 0) {
                int e = part.indexOf(']', b);
                String idx = part.substring(b + 1, e);
                try {
                    steps.add(Integer.parseInt(idx));
                } catch (NumberFormatException nfe) {
                    steps.add(idx);
                }
                b = part.indexOf('[', e);
            }
        }
        JsonNode node = root;
        for (int i = 0; i < steps.size() - 1; i++) {
            Object s = steps.get(i);
            node = s instanceof Integer n ? node.path(n) : node.path((String) s);
        }
        Object last = steps.get(steps.size() - 1);
        if (node instanceof ObjectNode o && last instanceof String f && o.has(f)) {
            o.remove(f);
            return true;
        }
        if (node instanceof ArrayNode a && last instanceof Integer n && n < a.size()) {
            a.remove(n);
            return true;
        }
        return false;
    }

    /** {@return the resource as the object tree the API returns}. */
    public ObjectNode toTree(Resource r) {
        return (ObjectNode) codec.toTree(r);
    }

    private String compact(JsonNode n) {
        String s = n.toString();
        return s.length() > 200 ? s.substring(0, 200) : s;
    }
}
