package calico.charts;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.StreamSupport;

/** The objects one {@code helm template} produced, parsed. */
record Rendered(List<JsonNode> objects) {

    private static final ObjectMapper YAML = new YAMLMapper();

    static Rendered parse(String manifests) {
        List<JsonNode> objects = new ArrayList<>();
        try (var parser = new YAMLFactory().createParser(manifests)) {
            for (var it = YAML.readValues(parser, JsonNode.class); it.hasNext(); ) {
                JsonNode n = it.next();
                if (n != null && n.isObject() && n.has("kind")) {
                    objects.add(n);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("helm's output is not YAML", e);
        }
        return new Rendered(List.copyOf(objects));
    }

    /** {@return the object of that kind and name}, or an AssertionError listing what there is. */
    JsonNode get(String kind, String name) {
        return objects.stream()
                .filter(o -> o.path("kind").asText().equals(kind) && o.path("metadata").path("name").asText().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no " + kind + " " + name + " in " + names()));
    }

    boolean has(String kind, String name) {
        return objects.stream().anyMatch(o -> o.path("kind").asText().equals(kind)
                && o.path("metadata").path("name").asText().equals(name));
    }

    List<JsonNode> ofKind(String kind) {
        return objects.stream().filter(o -> o.path("kind").asText().equals(kind)).toList();
    }

    /** {@return "Kind/name" of every object} */
    List<String> names() {
        return objects.stream().map(o -> o.path("kind").asText() + "/" + o.path("metadata").path("name").asText()).toList();
    }

    /** {@return every container and init container of every workload, by "workload/container"} */
    Map<String, JsonNode> containers() {
        Map<String, JsonNode> all = new LinkedHashMap<>();
        for (JsonNode o : objects) {
            JsonNode spec = o.path("spec").path("template").path("spec");
            for (String field : List.of("initContainers", "containers")) {
                for (JsonNode c : spec.path(field)) {
                    all.put(o.path("metadata").path("name").asText() + "/" + c.path("name").asText(), c);
                }
            }
        }
        return all;
    }

    static JsonNode container(JsonNode workload, String name) {
        JsonNode spec = workload.path("spec").path("template").path("spec");
        for (String field : List.of("initContainers", "containers")) {
            for (JsonNode c : spec.path(field)) {
                if (c.path("name").asText().equals(name)) {
                    return c;
                }
            }
        }
        throw new AssertionError("no container " + name + " in " + workload.path("metadata").path("name").asText());
    }

    /** {@return a container's literal env values by name} ({@code valueFrom} entries as "") */
    static Map<String, String> env(JsonNode container) {
        Map<String, String> env = new LinkedHashMap<>();
        for (JsonNode e : container.path("env")) {
            env.put(e.path("name").asText(), e.path("value").asText(""));
        }
        return env;
    }

    /** {@return the rules of a (Cluster)Role as "group/resource" → verbs} */
    static Map<String, List<String>> rules(JsonNode role) {
        Map<String, List<String>> rules = new LinkedHashMap<>();
        for (JsonNode r : role.path("rules")) {
            List<String> verbs = StreamSupport.stream(r.path("verbs").spliterator(), false).map(JsonNode::asText).toList();
            for (JsonNode g : r.path("apiGroups")) {
                for (JsonNode res : r.path("resources")) {
                    rules.computeIfAbsent(g.asText() + "/" + res.asText(), k -> new ArrayList<>()).addAll(verbs);
                }
            }
        }
        return rules;
    }
}
