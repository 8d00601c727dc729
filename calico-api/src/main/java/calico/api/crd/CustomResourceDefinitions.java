package calico.api.crd;

import calico.api.model.ResourceKind;
import calico.api.schema.ModelSchemas;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * Calico's {@code crd.projectcalico.org/v1} CustomResourceDefinitions, generated from the model:
 * one per kind that the kubernetes datastore stores as a custom resource ({@link #kinds()}), with
 * a structural OpenAPI schema of the v3 fields (the custom resource's {@code spec} and
 * {@code status} are the v3 ones unchanged, so the API server prunes nothing the codec writes).
 *
 * <p>{@code charts/calico/crds/} holds the generated files; a test fails when regenerating would
 * change them. Regenerate with
 * {@code mvn -pl calico-api -q exec:java -Dexec.mainClass=calico.api.crd.CustomResourceDefinitions -Dexec.args=charts/calico/crds} (from the repository root)..
 */
public final class CustomResourceDefinitions {

    public static final String GROUP = "crd.projectcalico.org";
    public static final String VERSION = "v1";

    private static final JsonNodeFactory F = JsonNodeFactory.instance;
    private static final String HEADER = "# Generated from the calico-api model by calico.api.crd.CustomResourceDefinitions; do not edit.\n";

    private final ModelSchemas schemas = new ModelSchemas();
    private final YAMLMapper yaml = YAMLMapper.builder(YAMLFactory.builder()
            .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
            .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
            .enable(YAMLGenerator.Feature.ALWAYS_QUOTE_NUMBERS_AS_STRINGS)
            .enable(YAMLGenerator.Feature.INDENT_ARRAYS_WITH_INDICATOR)
            .disable(YAMLGenerator.Feature.SPLIT_LINES)
            .build()).build();

    /**
     * {@return whether the kubernetes datastore stores {@code kind} as a custom resource}: every
     * kind but those it presents from Kubernetes' own objects (WorkloadEndpoint from Pods, Profile
     * from Namespaces and ServiceAccounts, Node from Nodes, KubernetesService from Services,
     * KubernetesEndpointSlice from EndpointSlices).
     */
    public static boolean stored(ResourceKind kind) {
        return switch (kind) {
            case WORKLOAD_ENDPOINT, PROFILE, NODE, KUBERNETES_SERVICE, KUBERNETES_ENDPOINT_SLICE -> false;
            default -> true;
        };
    }

    /** {@return the kinds with a CRD}, in the model's order. */
    public static List<ResourceKind> kinds() {
        return Arrays.stream(ResourceKind.values()).filter(CustomResourceDefinitions::stored).toList();
    }

    /**
     * {@return the custom resource's kind}: the v3 kind, except IPAMConfiguration, whose custom
     * resource Calico names {@code IPAMConfig} (plural {@code ipamconfigs}).
     */
    public static String kind(ResourceKind kind) {
        return kind == ResourceKind.IPAM_CONFIGURATION ? "IPAMConfig" : kind.kind();
    }

    /** {@return the CRD's name}, {@code <plural>.crd.projectcalico.org}. */
    public static String name(ResourceKind kind) {
        return kind.plural() + "." + GROUP;
    }

    /** {@return the file a CRD is written to}, as controller-gen names it. */
    public static String fileName(ResourceKind kind) {
        return GROUP + "_" + kind.plural() + ".yaml";
    }

    /** {@return the CRD of {@code kind}}. */
    public ObjectNode definition(ResourceKind kind) {
        if (!stored(kind)) {
            throw new IllegalArgumentException(kind.kind() + " has no CRD: the kubernetes datastore presents it from Kubernetes objects");
        }
        ObjectNode crd = F.objectNode();
        crd.put("apiVersion", "apiextensions.k8s.io/v1");
        crd.put("kind", "CustomResourceDefinition");
        crd.putObject("metadata").put("name", name(kind));
        ObjectNode spec = crd.putObject("spec");
        spec.put("group", GROUP);
        String crdKind = kind(kind);
        spec.putObject("names").put("kind", crdKind).put("listKind", crdKind + "List").put("plural", kind.plural())
                .put("singular", crdKind.toLowerCase(java.util.Locale.ROOT));
        spec.put("scope", kind.namespaced() ? "Namespaced" : "Cluster");
        ObjectNode version = spec.putArray("versions").addObject();
        version.put("name", VERSION).put("served", true).put("storage", true);
        version.putObject("schema").set("openAPIV3Schema", schema(kind));
        if (kind.statusSubresource()) {
            version.putObject("subresources").putObject("status");
        }
        return crd;
    }

    /** {@return every CRD as YAML, by file name}. */
    public Map<String, String> files() {
        Map<String, String> out = new LinkedHashMap<>();
        for (ResourceKind k : kinds()) {
            try {
                out.put(fileName(k), HEADER + yaml.writeValueAsString(definition(k)));
            } catch (JsonProcessingException e) {
                throw new IllegalStateException("cannot write the CRD of " + k.kind(), e);
            }
        }
        return out;
    }

    /** Writes every CRD into {@code args[0]}, removing generated files of kinds that no longer have one. */
    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: CustomResourceDefinitions DIR");
            System.exit(2);
        }
        Path dir = Path.of(args[0]);
        Files.createDirectories(dir);
        Map<String, String> files = new CustomResourceDefinitions().files();
        try (Stream<Path> existing = Files.list(dir)) {
            for (Path p : (Iterable<Path>) existing::iterator) {
                if (p.getFileName().toString().startsWith(GROUP + "_") && !files.containsKey(p.getFileName().toString())) {
                    Files.delete(p);
                }
            }
        }
        for (Map.Entry<String, String> f : files.entrySet()) {
            Files.writeString(dir.resolve(f.getKey()), f.getValue(), StandardCharsets.UTF_8);
        }
        System.out.println("wrote " + files.size() + " CRDs to " + dir.toAbsolutePath());
    }

    private ObjectNode schema(ResourceKind kind) {
        ObjectNode s = schemas.record(kind.type(), new Inline());
        ObjectNode props = (ObjectNode) s.get("properties");
        ObjectNode ordered = F.objectNode();
        ordered.set("apiVersion", F.objectNode().put("type", "string").put("description",
                "APIVersion defines the versioned schema of this representation of an object."));
        ordered.set("kind", F.objectNode().put("type", "string").put("description",
                "Kind is a string value representing the REST resource this object represents."));
        // The API server validates metadata itself; a structural schema may not describe it further.
        ordered.set("metadata", F.objectNode().put("type", "object"));
        props.fields().forEachRemaining(f -> {
            if (!ordered.has(f.getKey())) {
                ordered.set(f.getKey(), f.getValue());
            }
        });
        s.set("properties", ordered);
        if (!s.has("description")) {
            s.put("description", kind.kind() + " is a projectcalico.org/v3 resource.");
        }
        return s;
    }

    /**
     * Inlines every record, as a structural schema must. A record met again inside itself (a
     * recursive type) keeps its fields unchecked there ({@code x-kubernetes-preserve-unknown-fields}).
     */
    private static final class Inline implements ModelSchemas.Records {
        private final Deque<String> building = new ArrayDeque<>();

        @Override
        public JsonNode use(String name, Supplier<ObjectNode> body) {
            if (name.equals(ModelSchemas.META + "ObjectMeta")) {
                return F.objectNode().put("type", "object");
            }
            if (building.contains(name)) {
                return F.objectNode().put("type", "object").put("x-kubernetes-preserve-unknown-fields", true);
            }
            building.push(name);
            try {
                return body.get();
            } finally {
                building.pop();
            }
        }

        @Override
        public JsonNode describe(JsonNode schema, String description) {
            ObjectNode out = ((ObjectNode) schema).deepCopy();
            out.put("description", description);
            return out;
        }
    }
}
