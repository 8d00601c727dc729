package calico.api.model;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.codec.ResourceCodec;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Test helpers: load manifests and check that the codec round-trips them without loss. */
final class RoundTrip {

    static final ResourceCodec CODEC = ResourceCodec.get();
    private static final YAMLMapper YAML = new YAMLMapper();
    private static final ObjectMapper JSON = new JsonMapper();

    private RoundTrip() {
    }

    static String resource(String path) {
        try (InputStream in = RoundTrip.class.getResourceAsStream("/" + path)) {
            if (in == null) {
                throw new IllegalArgumentException("no test resource " + path);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@return every YAML document of {@code text} as a plain tree}, skipping empty ones. */
    static List<JsonNode> yamlTrees(String text) {
        List<JsonNode> out = new ArrayList<>();
        try (var it = YAML.readValues(YAML.getFactory().createParser(text), JsonNode.class)) {
            while (it.hasNextValue()) {
                JsonNode n = it.nextValue();
                if (n != null && !n.isNull() && !n.isMissingNode()) {
                    out.add(n);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    static JsonNode jsonTree(String json) {
        try {
            return JSON.readTree(json);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Checks one resource against the document it was parsed from: YAML and JSON output both
     * read back to an equal record, and the JSON output has exactly the input's tree (same
     * field names, same values, nothing dropped, nothing added).
     */
    static void assertLossless(Resource parsed, JsonNode inputTree) {
        String yaml = CODEC.toYaml(parsed);
        assertThat(CODEC.parse(yaml)).as("YAML round trip of %s", parsed.key()).isEqualTo(parsed);

        String json = CODEC.toJson(parsed);
        Resource fromJson = CODEC.read(parsed.resourceKind(), json.getBytes(StandardCharsets.UTF_8));
        assertThat(fromJson).as("JSON round trip of %s", parsed.key()).isEqualTo(parsed);

        assertThat(jsonTree(json)).as("JSON tree of %s", parsed.key()).isEqualTo(inputTree);
    }

    /** Parses every document of {@code text} and checks each for loss; {@return the resources}. */
    static List<Resource> assertAllLossless(String text) {
        List<Resource> resources = CODEC.parseAll(text);
        List<JsonNode> trees = yamlTrees(text);
        assertThat(resources).hasSameSizeAs(trees);
        for (int i = 0; i < resources.size(); i++) {
            assertLossless(resources.get(i), trees.get(i));
        }
        return resources;
    }
}
