package calico.api.schema;

import calico.api.codec.ResourceCodec;
import calico.api.model.NullableItems;
import calico.api.model.ObjectMeta;
import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.introspect.BeanPropertyDefinition;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.Properties;
import java.util.function.Supplier;

/**
 * JSON schemas of the {@code projectcalico.org/v3} model, read from Jackson's view of the records,
 * so every field name and type is exactly what the codec writes. One walk serves two consumers:
 * the API server's OpenAPI documents, which define each record once and refer to it, and the
 * CRDs, whose structural schemas must inline everything ({@link Records} decides which).
 *
 * <p>Descriptions come from {@code descriptions.properties} beside this class: our own wording,
 * keyed {@code <Definition>}, {@code <Definition>#<property>} or {@code *#<property>}.
 * Immutable and thread-safe.
 */
public final class ModelSchemas {

    /** The prefix of a model record's definition name, as Calico's OpenAPI names them. */
    public static final String MODEL_PREFIX = "org.projectcalico.api.v3.";
    /** The prefix of Kubernetes' meta/v1 definitions. */
    public static final String META = "io.k8s.apimachinery.pkg.apis.meta.v1.";

    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    /** What the walk does with a record type: refer to a definition of it, or inline it. */
    public interface Records {
        /**
         * {@return the schema to put where the record {@code name} is used}; {@code body} builds
         * its object schema (call it at most once per name, and not while it is being built for a
         * recursive type).
         */
        JsonNode use(String name, Supplier<ObjectNode> body);

        /** {@return {@code schema} with a description} (a reference may need wrapping). */
        JsonNode describe(JsonNode schema, String description);
    }

    private final ObjectMapper mapper = ResourceCodec.get().jsonMapper();
    private final Properties descriptions = load();

    /**
     * {@return the object schema of a record type}: {@code type: object}, its description, and
     * one property per field Jackson serializes, described where the file describes it.
     */
    public ObjectNode record(Class<?> type, Records records) {
        return record(mapper.constructType(type), definitionName(type), records);
    }

    private ObjectNode record(JavaType type, String name, Records records) {
        ObjectNode s = F.objectNode().put("type", "object");
        String shortName = name.startsWith(MODEL_PREFIX) ? name.substring(MODEL_PREFIX.length()) : null;
        if (shortName != null) {
            definitionDescription(shortName).ifPresent(d -> s.put("description", d));
        }
        ObjectNode props = s.putObject("properties");
        for (BeanPropertyDefinition p : mapper.getSerializationConfig().introspect(type).findProperties()) {
            if (!p.couldSerialize()) {
                continue;
            }
            JsonNode schema = schema(p.getPrimaryType(), records);
            if (p.getPrimaryMember().hasAnnotation(NullableItems.class) && schema.has("items")) {
                ((ObjectNode) schema.get("items")).put("nullable", true);
            }
            String description = shortName == null ? null : description(shortName, p.getName());
            props.set(p.getName(), description == null ? schema : records.describe(schema, description));
        }
        return s;
    }

    /** {@return the schema of a value of type {@code t}}; records go through {@code records}. */
    public JsonNode schema(JavaType t, Records records) {
        Class<?> c = t.getRawClass();
        if (c == String.class) {
            return F.objectNode().put("type", "string");
        }
        if (c == Boolean.class || c == boolean.class) {
            return F.objectNode().put("type", "boolean");
        }
        if (c == Integer.class || c == int.class || c == Short.class || c == short.class) {
            return F.objectNode().put("type", "integer").put("format", "int32");
        }
        if (c == Long.class || c == long.class) {
            return F.objectNode().put("type", "integer").put("format", "int64");
        }
        if (c == Double.class || c == double.class || c == Float.class || c == float.class) {
            return F.objectNode().put("type", "number");
        }
        if (c.isEnum()) {
            ObjectNode s = F.objectNode().put("type", "string");
            ArrayNode values = s.putArray("enum");
            for (Object constant : c.getEnumConstants()) {
                values.add(mapper.valueToTree(constant).asText());
            }
            return s;
        }
        if (t.isCollectionLikeType() || t.isArrayType()) {
            ObjectNode s = F.objectNode().put("type", "array");
            s.set("items", schema(t.getContentType(), records));
            return s;
        }
        if (t.isMapLikeType()) {
            ObjectNode s = F.objectNode().put("type", "object");
            s.set("additionalProperties", schema(t.getContentType(), records));
            return s;
        }
        if (JsonNode.class.isAssignableFrom(c) || c == Object.class) {
            return F.objectNode().put("type", "object").put("x-kubernetes-preserve-unknown-fields", true);
        }
        if (scalarWrapper(c)) {
            // Calico's numorstring types (Port, Protocol, ASNumber, ...).
            return F.objectNode().put("x-kubernetes-int-or-string", true);
        }
        String name = definitionName(c);
        return records.use(name, () -> record(t, name, records));
    }

    /** {@return the definition name of a record type}, e.g. {@code org.projectcalico.api.v3.Rule}. */
    public static String definitionName(Class<?> c) {
        return c == ObjectMeta.class ? META + "ObjectMeta" : MODEL_PREFIX + nested(c);
    }

    /** {@return the description of a definition} ({@code GlobalNetworkPolicy}, {@code Rule}, ...), if there is one. */
    public Optional<String> definitionDescription(String shortName) {
        return Optional.ofNullable(descriptions.getProperty(shortName));
    }

    /** {@return the description of a definition's property}: its own entry, else the shared one, else null. */
    public String description(String definition, String property) {
        String own = descriptions.getProperty(definition + "#" + property);
        return own != null ? own : descriptions.getProperty("*#" + property);
    }

    private static boolean scalarWrapper(Class<?> c) {
        for (Method m : c.getDeclaredMethods()) {
            if (m.isAnnotationPresent(JsonValue.class)) {
                return true;
            }
            if (m.isAnnotationPresent(JsonCreator.class) && m.getParameterCount() == 1 && Modifier.isStatic(m.getModifiers())
                    && (m.getParameterTypes()[0] == Object.class || m.getParameterTypes()[0] == String.class)) {
                return true;
            }
        }
        return false;
    }

    private static String nested(Class<?> c) {
        return c.getEnclosingClass() == null ? c.getSimpleName() : nested(c.getEnclosingClass()) + "." + c.getSimpleName();
    }

    private static Properties load() {
        Properties p = new Properties();
        try (InputStream in = ModelSchemas.class.getResourceAsStream("descriptions.properties")) {
            if (in == null) {
                throw new IllegalStateException("descriptions.properties is missing from the classpath");
            }
            p.load(new InputStreamReader(in, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read descriptions.properties", e);
        }
        return p;
    }
}
