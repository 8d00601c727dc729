package calico.ctl;

import calico.api.codec.ResourceCodec;
import calico.api.codec.ResourceParseException;
import calico.api.model.Resource;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.fabric8.zjsonpatch.CompatibilityFlags;
import io.fabric8.zjsonpatch.JsonPatch;
import io.fabric8.zjsonpatch.JsonPatchException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;

/**
 * {@code calicoctl patch} and {@code label}: a change to one stored resource, made on its JSON form and read
 * back through the codec, so that the result is parsed and validated as any input is. The patch may be JSON or
 * YAML, as kubectl takes it.
 */
final class ResourcePatch {

    /** How {@code --type} reads the patch. */
    enum Type {
        /** Calico's default; for Calico's kinds (no patch strategies declared) the same as a JSON merge patch. */
        STRATEGIC,
        /** JSON Merge Patch (RFC 7386): objects merge, {@code null} removes, anything else replaces. */
        MERGE,
        /** JSON Patch (RFC 6902): a list of operations. */
        JSON
    }

    private static final ObjectMapper YAML = new YAMLMapper();

    private ResourcePatch() {
    }

    /** {@return {@code current} with {@code patch} applied}; a patch that cannot apply names why. */
    static Resource apply(ResourceCodec codec, Resource current, String patch, Type type) {
        JsonNode p = parse(patch);
        JsonNode before = codec.toTree(current);
        JsonNode after = switch (type) {
            case STRATEGIC, MERGE -> {
                if (!p.isObject()) {
                    throw new ResourceParseException("--patch", "a merge patch must be an object");
                }
                yield merge(before.deepCopy(), p);
            }
            case JSON -> {
                if (!p.isArray()) {
                    throw new ResourceParseException("--patch", "a JSON patch must be a list of operations");
                }
                try {
                    yield JsonPatch.apply(p, before, EnumSet.of(CompatibilityFlags.FORBID_REMOVE_MISSING_OBJECT)); // RFC 6902, strictly
                } catch (JsonPatchException | IllegalArgumentException e) {
                    throw new ResourceParseException("--patch", e.getMessage());
                }
            }
        };
        List<Resource> parsed = codec.fromTree(after, "");
        if (parsed.size() != 1) {
            throw new ResourceParseException("--patch", "the patched document is not one resource");
        }
        Resource out = parsed.get(0);
        if (!out.key().equals(current.key())) {
            throw new ResourceParseException("--patch", "a patch may not change the kind, name or namespace");
        }
        return out;
    }

    /** RFC 7386 on {@code target} (changed in place where it is an object); {@return the result}. */
    static JsonNode merge(JsonNode target, JsonNode patch) {
        if (!patch.isObject()) {
            return patch;
        }
        ObjectNode t = target != null && target.isObject() ? (ObjectNode) target : YAML.createObjectNode();
        List<String> names = new ArrayList<>();
        patch.fieldNames().forEachRemaining(names::add);
        for (String name : names) {
            JsonNode value = patch.get(name);
            if (value.isNull()) {
                t.remove(name);
            } else {
                t.set(name, merge(t.get(name), value));
            }
        }
        return t;
    }

    private static JsonNode parse(String patch) {
        try {
            JsonNode n = YAML.readTree(patch); // YAML is a superset of JSON
            if (n == null || n.isMissingNode()) {
                throw new ResourceParseException("--patch", "is empty");
            }
            return n;
        } catch (JsonProcessingException e) {
            throw new ResourceParseException("--patch", "is neither JSON nor YAML: " + e.getOriginalMessage());
        }
    }
}
