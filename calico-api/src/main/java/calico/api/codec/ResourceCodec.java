package calico.api.codec;

import calico.api.model.Resource;
import calico.api.model.ResourceKind;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.type.LogicalType;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.exc.ValueInstantiationException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Reads and writes {@code projectcalico.org/v3} resources as YAML or JSON with Calico's
 * field names. Strict: unknown fields, wrong types and unknown kinds are rejected with a
 * {@link ResourceParseException} naming the field.
 *
 * <p>Thread-safe; one shared instance is enough ({@link #get()}).
 */
public final class ResourceCodec {

    private static final ResourceCodec INSTANCE = new ResourceCodec();

    private final ObjectMapper json;
    private final ObjectMapper yaml;

    private ResourceCodec() {
        this.json = configure(JsonMapper.builder()).build();
        this.yaml = configure(YAMLMapper.builder(YAMLFactory.builder()
                        .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
                        .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
                        // "3.30" or "4711" in a string field must stay a string when read back.
                        .enable(YAMLGenerator.Feature.ALWAYS_QUOTE_NUMBERS_AS_STRINGS)
                        .build()))
                .build();
    }

    private static <M extends ObjectMapper, B extends com.fasterxml.jackson.databind.cfg.MapperBuilder<M, B>> B configure(B b) {
        // Calico (Go's encoding/json) rejects a number or boolean where a string is expected and a
        // fraction where an integer is expected: so do we, instead of silently converting.
        b.withCoercionConfig(LogicalType.Textual, c -> c
                .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail));
        b.withCoercionConfig(LogicalType.Integer, c -> c
                .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                .setCoercion(CoercionInputShape.String, CoercionAction.Fail));
        b.withCoercionConfig(LogicalType.Boolean, c -> c
                .setCoercion(CoercionInputShape.String, CoercionAction.Fail)
                .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail));
        return b.enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
                .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
                .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY)
                .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
                .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
                .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS)
                .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS);
    }

    public static ResourceCodec get() {
        return INSTANCE;
    }

    /** {@return the strict JSON mapper}, for callers that map nested values (e.g. Kubernetes objects). */
    public ObjectMapper jsonMapper() {
        return json;
    }

    /**
     * Parses one or more YAML documents (JSON is accepted too). {@code *List} documents are
     * expanded into their items; empty documents are skipped.
     */
    public List<Resource> parseAll(String text) {
        List<Resource> out = new ArrayList<>();
        try (var parser = yaml.getFactory().createParser(text)) {
            var it = yaml.readValues(parser, JsonNode.class);
            int doc = 0;
            while (it.hasNextValue()) {
                JsonNode node = it.nextValue();
                String prefix = doc == 0 ? "" : "document[" + doc + "].";
                doc++;
                if (node == null || node.isNull() || node.isMissingNode()) {
                    continue;
                }
                out.addAll(fromTree(node, prefix));
            }
        } catch (JsonProcessingException e) {
            throw syntaxError(e);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (RuntimeException e) {
            if (e.getCause() instanceof JsonProcessingException jpe && !(e instanceof ResourceParseException)) {
                throw syntaxError(jpe);
            }
            throw e;
        }
        return out;
    }

    /** Parses exactly one resource from YAML or JSON. */
    public Resource parse(String text) {
        List<Resource> all = parseAll(text);
        if (all.size() != 1) {
            throw new ResourceParseException("", "expected exactly one resource, found " + all.size());
        }
        return all.get(0);
    }

    /** Parses one resource of a known kind from JSON bytes (the datastore's stored form). */
    public <T extends Resource> T read(ResourceKind kind, byte[] jsonBytes) {
        JsonNode node;
        try {
            node = json.readTree(jsonBytes);
        } catch (JsonProcessingException e) {
            throw syntaxError(e);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Resource r = fromObject(node, "");
        if (r.resourceKind() != kind) {
            throw new ResourceParseException("kind", "expected " + kind.kind() + ", found " + r.kind());
        }
        @SuppressWarnings("unchecked") T t = (T) r;
        return t;
    }

    /** Converts a parsed tree into resources ({@code *List} kinds expand to their items). */
    public List<Resource> fromTree(JsonNode node, String pathPrefix) {
        if (!node.isObject()) {
            throw new ResourceParseException(pathPrefix.isEmpty() ? "" : pathPrefix.substring(0, pathPrefix.length() - 1),
                    "expected an object with apiVersion, kind, metadata and spec");
        }
        String kind = text(node, "kind", pathPrefix);
        if (kind.endsWith("List")) {
            String apiVersion = text(node, "apiVersion", pathPrefix);
            if (!kind.equals("List") || !apiVersion.equals("v1")) {
                checkApiVersion(apiVersion, pathPrefix);
                Optional<ResourceKind> rk = ResourceKind.byKind(kind.substring(0, kind.length() - 4));
                if (rk.isEmpty()) {
                    throw new ResourceParseException(pathPrefix + "kind", "unknown kind \"" + kind + "\"");
                }
            }
            JsonNode items = node.get("items");
            List<Resource> out = new ArrayList<>();
            if (items == null || items.isNull()) {
                return out;
            }
            if (!items.isArray()) {
                throw new ResourceParseException(pathPrefix + "items", "expected a list");
            }
            for (int i = 0; i < items.size(); i++) {
                out.add(fromObject(items.get(i), pathPrefix + "items[" + i + "]."));
            }
            return out;
        }
        return List.of(fromObject(node, pathPrefix));
    }

    private Resource fromObject(JsonNode node, String pathPrefix) {
        if (!node.isObject()) {
            throw new ResourceParseException(trimDot(pathPrefix), "expected an object");
        }
        checkApiVersion(text(node, "apiVersion", pathPrefix), pathPrefix);
        String kindName = text(node, "kind", pathPrefix);
        ResourceKind kind = ResourceKind.byKind(kindName).orElseThrow(() ->
                new ResourceParseException(pathPrefix + "kind", "unknown kind \"" + kindName + "\""));
        ObjectNode body = ((ObjectNode) node).deepCopy();
        if (body.get("metadata") == null || !body.get("metadata").isObject()) {
            throw new ResourceParseException(pathPrefix + "metadata", "required");
        }
        try {
            return json.treeToValue(body, kind.type());
        } catch (JsonMappingException e) {
            throw mappingError(e, pathPrefix);
        } catch (JsonProcessingException e) {
            throw syntaxError(e);
        }
    }

    /** {@return the resource as compact JSON}, the datastore's stored form. */
    public byte[] toJsonBytes(Resource r) {
        try {
            return json.writeValueAsBytes(r);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialise " + r.key(), e);
        }
    }

    public String toJson(Resource r) {
        return new String(toJsonBytes(r), StandardCharsets.UTF_8);
    }

    /** {@return the resource as a YAML document}. */
    public String toYaml(Resource r) {
        try {
            return yaml.writeValueAsString(r);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialise " + r.key(), e);
        }
    }

    /** {@return the resource as a tree}, e.g. for embedding in a list or a watch event. */
    public JsonNode toTree(Resource r) {
        return json.valueToTree(r);
    }

    /**
     * {@return a {@code <Kind>List} document holding {@code items}}, as calicoctl and the API
     * server write lists; {@code resourceVersion} (the list's revision) may be null.
     */
    public JsonNode toListTree(ResourceKind kind, List<? extends Resource> items, String resourceVersion) {
        ObjectNode list = json.createObjectNode();
        list.put("apiVersion", Resource.API_VERSION);
        list.put("kind", kind.listKind());
        ObjectNode meta = list.putObject("metadata");
        if (resourceVersion != null) {
            meta.put("resourceVersion", resourceVersion);
        }
        var array = list.putArray("items");
        items.forEach(r -> array.add(toTree(r)));
        return list;
    }

    /** {@return any tree as YAML}, with the same quoting rules as {@link #toYaml(Resource)}. */
    public String writeYaml(JsonNode tree) {
        try {
            return yaml.writeValueAsString(tree);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write YAML", e);
        }
    }

    /** {@return any tree as indented JSON}. */
    public String writePrettyJson(JsonNode tree) {
        try {
            return json.writerWithDefaultPrettyPrinter().writeValueAsString(tree);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write JSON", e);
        }
    }

    private static void checkApiVersion(String apiVersion, String pathPrefix) {
        if (!Resource.API_VERSION.equals(apiVersion)) {
            throw new ResourceParseException(pathPrefix + "apiVersion",
                    "must be \"" + Resource.API_VERSION + "\", found \"" + apiVersion + "\"");
        }
    }

    private static String text(JsonNode node, String field, String pathPrefix) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) {
            throw new ResourceParseException(pathPrefix + field, "required");
        }
        if (!v.isTextual()) {
            throw new ResourceParseException(pathPrefix + field, "must be a string");
        }
        return v.asText();
    }

    private static String trimDot(String prefix) {
        return prefix.endsWith(".") ? prefix.substring(0, prefix.length() - 1) : prefix;
    }

    private static ResourceParseException syntaxError(JsonProcessingException e) {
        var loc = e.getLocation();
        String where = loc == null ? "" : " at line " + loc.getLineNr() + ", column " + loc.getColumnNr();
        return new ResourceParseException("", "malformed document" + where + ": " + e.getOriginalMessage(), e);
    }

    /** Turns Jackson's mapping error into "field.path: reason". */
    static ResourceParseException mappingError(JsonMappingException e, String pathPrefix) {
        String path = pathPrefix + fieldPath(e.getPath());
        String reason;
        if (e instanceof UnrecognizedPropertyException u) {
            reason = "unknown field";
        } else if (e instanceof InvalidFormatException f) {
            reason = "invalid value " + quote(f.getValue()) + expected(f.getTargetType());
        } else if (e instanceof ValueInstantiationException v) {
            Throwable c = v.getCause();
            reason = c != null && c.getMessage() != null ? c.getMessage() : e.getOriginalMessage();
        } else if (e instanceof MismatchedInputException m) {
            reason = "wrong type" + expected(m.getTargetType());
        } else {
            Throwable c = e.getCause();
            reason = c != null && c.getMessage() != null ? c.getMessage() : e.getOriginalMessage();
        }
        return new ResourceParseException(trimDot(path), reason, e);
    }

    private static String expected(Class<?> type) {
        if (type == null) {
            return "";
        }
        if (type.isEnum()) {
            List<String> names = new ArrayList<>();
            for (Object c : type.getEnumConstants()) {
                names.add(c.toString());
            }
            return ", expected one of " + names;
        }
        if (Number.class.isAssignableFrom(type) || (type.isPrimitive() && type != boolean.class)) {
            return ", expected a number";
        }
        if (type == Boolean.class || type == boolean.class) {
            return ", expected true or false";
        }
        if (type == String.class) {
            return ", expected a string";
        }
        if (List.class.isAssignableFrom(type)) {
            return ", expected a list";
        }
        if (java.util.Map.class.isAssignableFrom(type) || type.isRecord()) {
            return ", expected an object";
        }
        return "";
    }

    private static String quote(Object v) {
        return v instanceof String s ? "\"" + s + "\"" : String.valueOf(v);
    }

    private static String fieldPath(List<JsonMappingException.Reference> refs) {
        StringBuilder sb = new StringBuilder();
        for (var ref : refs) {
            if (ref.getIndex() >= 0) {
                sb.append('[').append(ref.getIndex()).append(']');
            } else if (ref.getFieldName() != null) {
                if (!sb.isEmpty()) {
                    sb.append('.');
                }
                sb.append(ref.getFieldName());
            }
        }
        return sb.toString();
    }
}
