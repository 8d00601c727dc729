package calico.api.k8s;

import calico.api.codec.ResourceParseException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Reads Kubernetes objects (YAML or JSON, as {@code kubectl get -o yaml} or the API server
 * print them) into the records of this package. Fields the records do not model
 * ({@code status}, {@code managedFields}, ...) are ignored; a wrong {@code kind} or
 * {@code apiVersion}, or a known field of the wrong shape, is an error naming the field.
 * Thread-safe.
 */
public final class KubernetesObjects {

    private static final Map<Class<?>, String[]> TYPES = Map.of(
            KubeNetworkPolicy.class, new String[] {KubeNetworkPolicy.API_VERSION, KubeNetworkPolicy.KIND},
            KubeAdminNetworkPolicy.class, new String[] {KubeAdminNetworkPolicy.API_VERSION, KubeAdminNetworkPolicy.KIND},
            KubeBaselineAdminNetworkPolicy.class,
            new String[] {KubeBaselineAdminNetworkPolicy.API_VERSION, KubeBaselineAdminNetworkPolicy.KIND},
            KubeNamespace.class, new String[] {"v1", KubeNamespace.KIND},
            KubeServiceAccount.class, new String[] {"v1", KubeServiceAccount.KIND},
            KubePod.class, new String[] {"v1", KubePod.KIND});

    private final ObjectMapper json = JsonMapper.builder()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build();
    private final ObjectMapper yaml = YAMLMapper.builder()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build();

    /** Parses one object of the given record type from YAML or JSON text. */
    public <T> T parse(String text, Class<T> type) {
        String[] expected = TYPES.get(type);
        if (expected == null) {
            throw new IllegalArgumentException(type.getSimpleName() + " is not a Kubernetes object type; known: "
                    + TYPES.keySet().stream().map(Class::getSimpleName).sorted().collect(Collectors.joining(", ")));
        }
        JsonNode node;
        try {
            node = yaml.readTree(text);
        } catch (JsonProcessingException e) {
            throw new ResourceParseException("", "not YAML or JSON: " + e.getOriginalMessage(), e);
        }
        if (node == null || !node.isObject()) {
            throw new ResourceParseException("", "expected an object with apiVersion, kind and metadata");
        }
        check(node, "apiVersion", expected[0]);
        check(node, "kind", expected[1]);
        try {
            return json.treeToValue(node, type);
        } catch (JsonMappingException e) {
            throw new ResourceParseException(path(e), e.getOriginalMessage(), e);
        } catch (JsonProcessingException e) {
            throw new ResourceParseException("", e.getOriginalMessage(), e);
        }
    }

    private static void check(JsonNode node, String field, String expected) {
        JsonNode v = node.get(field);
        if (v == null || !v.isTextual()) {
            throw new ResourceParseException(field, "is required (expected \"" + expected + "\")");
        }
        if (!v.asText().equals(expected)) {
            throw new ResourceParseException(field, "expected \"" + expected + "\", found \"" + v.asText() + "\"");
        }
    }

    private static String path(JsonMappingException e) {
        StringBuilder sb = new StringBuilder();
        for (JsonMappingException.Reference r : e.getPath()) {
            if (r.getFieldName() != null) {
                if (sb.length() > 0) {
                    sb.append('.');
                }
                sb.append(r.getFieldName());
            } else if (r.getIndex() >= 0) {
                sb.append('[').append(r.getIndex()).append(']');
            }
        }
        return sb.toString();
    }
}
