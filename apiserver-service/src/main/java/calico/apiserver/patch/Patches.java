package calico.apiserver.patch;

import calico.apiserver.errors.ApiException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The patch algorithms on JSON trees: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and
 * strategic merge patch as it behaves for Calico's types, which declare no merge keys: maps merge,
 * lists are replaced, {@code null} deletes, and the directives {@code $patch: delete|replace},
 * {@code $retainKeys}, {@code $setElementOrder/…} and {@code $deleteFromPrimitiveList/…} are honoured.
 * Inputs are never modified except {@code target}, which callers pass as a copy.
 */
public final class Patches {

    private Patches() {
    }

    /** RFC 7386. */
    public static JsonNode mergePatch(JsonNode target, JsonNode patch) {
        if (!patch.isObject()) {
            return patch.deepCopy();
        }
        ObjectNode out = target != null && target.isObject() ? (ObjectNode) target : JsonNodeFactory.instance.objectNode();
        for (Iterator<Map.Entry<String, JsonNode>> it = patch.fields(); it.hasNext(); ) {
            var e = it.next();
            if (e.getValue().isNull()) {
                out.remove(e.getKey());
            } else {
                out.set(e.getKey(), mergePatch(out.get(e.getKey()), e.getValue()));
            }
        }
        return out;
    }

    /** Strategic merge for types without merge keys (every projectcalico.org/v3 type). */
    public static JsonNode strategicMerge(JsonNode target, JsonNode patch) {
        if (!patch.isObject()) {
            return stripDirectives(patch.deepCopy());
        }
        String directive = patch.path("$patch").asText("");
        if (directive.equals("delete")) {
            return null;
        }
        ObjectNode out = target != null && target.isObject() && !directive.equals("replace")
                ? (ObjectNode) target : JsonNodeFactory.instance.objectNode();
        if (patch.get("$retainKeys") instanceof ArrayNode keep) {
            List<String> names = new ArrayList<>();
            keep.forEach(k -> names.add(k.asText()));
            out.retain(names);
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = patch.fields(); it.hasNext(); ) {
            var e = it.next();
            String key = e.getKey();
            if (key.startsWith("$deleteFromPrimitiveList/")) {
                String field = key.substring("$deleteFromPrimitiveList/".length());
                if (out.get(field) instanceof ArrayNode list) {
                    List<JsonNode> drop = new ArrayList<>();
                    e.getValue().forEach(drop::add);
                    ArrayNode kept = list.arrayNode();
                    list.forEach(v -> {
                        if (!drop.contains(v)) {
                            kept.add(v);
                        }
                    });
                    out.set(field, kept);
                }
                continue;
            }
            if (key.startsWith("$")) {
                continue;
            }
            if (e.getValue().isNull()) {
                out.remove(key);
                continue;
            }
            JsonNode merged = strategicMerge(out.get(key), e.getValue());
            if (merged == null) {
                out.remove(key);
            } else {
                out.set(key, merged);
            }
        }
        return out;
    }

    /**
     * Server-side apply without field ownership: the applied configuration is merged into the
     * live object as a strategic merge (what it sets wins; what it leaves out is kept).
     */
    public static JsonNode apply(JsonNode target, JsonNode applied) {
        return strategicMerge(target, applied);
    }

    /** {@return the tree without strategic-merge directives}, for objects created from a patch. */
    public static JsonNode stripDirectives(JsonNode n) {
        if (n instanceof ObjectNode o) {
            List<String> drop = new ArrayList<>();
            o.fieldNames().forEachRemaining(f -> {
                if (f.startsWith("$")) {
                    drop.add(f);
                }
            });
            o.remove(drop);
            o.forEach(Patches::stripDirectives);
        } else if (n instanceof ArrayNode a) {
            for (int i = a.size() - 1; i >= 0; i--) {
                if (a.get(i).isObject() && a.get(i).has("$patch")) {
                    a.remove(i);
                } else {
                    stripDirectives(a.get(i));
                }
            }
        }
        return n;
    }

    /** RFC 6902; a failed operation is a 422, as kube-apiserver answers. */
    public static JsonNode jsonPatch(JsonNode target, JsonNode ops) {
        JsonNode doc = target;
        int i = 0;
        for (JsonNode op : ops) {
            String kind = op.path("op").asText("");
            String path = op.path("path").asText(null);
            if (path == null) {
                throw failed(i, "missing path");
            }
            switch (kind) {
                case "add" -> doc = add(doc, path, value(op, i), i);
                case "remove" -> doc = remove(doc, path, i);
                case "replace" -> {
                    get(doc, path, i);
                    doc = add(remove(doc, path, i), path, value(op, i), i);
                }
                case "move" -> {
                    String from = op.path("from").asText("");
                    JsonNode v = get(doc, from, i).deepCopy();
                    doc = add(remove(doc, from, i), path, v, i);
                }
                case "copy" -> doc = add(doc, path, get(doc, op.path("from").asText(""), i).deepCopy(), i);
                case "test" -> {
                    if (!get(doc, path, i).equals(value(op, i))) {
                        throw failed(i, "testing value " + path + " failed");
                    }
                }
                default -> throw failed(i, "unexpected operation \"" + kind + "\"");
            }
            i++;
        }
        return doc;
    }

    private static JsonNode value(JsonNode op, int i) {
        if (!op.has("value")) {
            throw failed(i, "missing value");
        }
        return op.get("value").deepCopy();
    }

    private static List<String> tokens(String pointer, int i) {
        if (pointer.isEmpty()) {
            return List.of();
        }
        if (!pointer.startsWith("/")) {
            throw failed(i, "invalid JSON pointer \"" + pointer + "\"");
        }
        List<String> out = new ArrayList<>();
        for (String t : pointer.substring(1).split("/", -1)) {
            out.add(t.replace("~1", "/").replace("~0", "~"));
        }
        return out;
    }

    private static JsonNode get(JsonNode doc, String pointer, int i) {
        JsonNode n = doc;
        for (String t : tokens(pointer, i)) {
            n = child(n, t);
            if (n == null) {
                throw failed(i, "path " + pointer + " does not exist");
            }
        }
        return n;
    }

    private static JsonNode child(JsonNode n, String t) {
        if (n instanceof ObjectNode o) {
            return o.get(t);
        }
        if (n instanceof ArrayNode a) {
            try {
                int idx = Integer.parseInt(t);
                return idx >= 0 && idx < a.size() ? a.get(idx) : null;
            } catch (NumberFormatException e) {
                return null;
            }
        }
        return null;
    }

    private static JsonNode add(JsonNode doc, String pointer, JsonNode value, int i) {
        List<String> t = tokens(pointer, i);
        if (t.isEmpty()) {
            return value;
        }
        JsonNode parent = get(doc, toPointer(t.subList(0, t.size() - 1)), i);
        String last = t.get(t.size() - 1);
        if (parent instanceof ObjectNode o) {
            o.set(last, value);
        } else if (parent instanceof ArrayNode a) {
            if (last.equals("-")) {
                a.add(value);
            } else {
                int idx = index(last, a.size(), i, pointer);
                a.insert(idx, value);
            }
        } else {
            throw failed(i, "path " + pointer + " has no parent object");
        }
        return doc;
    }

    private static JsonNode remove(JsonNode doc, String pointer, int i) {
        List<String> t = tokens(pointer, i);
        if (t.isEmpty()) {
            throw failed(i, "cannot remove the whole document");
        }
        JsonNode parent = get(doc, toPointer(t.subList(0, t.size() - 1)), i);
        String last = t.get(t.size() - 1);
        if (parent instanceof ObjectNode o && o.has(last)) {
            o.remove(last);
        } else if (parent instanceof ArrayNode a) {
            int idx = index(last, a.size() - 1, i, pointer);
            a.remove(idx);
        } else {
            throw failed(i, "path " + pointer + " does not exist");
        }
        return doc;
    }

    private static int index(String token, int max, int i, String pointer) {
        try {
            int idx = Integer.parseInt(token);
            if (idx < 0 || idx > max) {
                throw failed(i, "index out of range in " + pointer);
            }
            return idx;
        } catch (NumberFormatException e) {
            throw failed(i, "invalid array index in " + pointer);
        }
    }

    private static String toPointer(List<String> tokens) {
        StringBuilder sb = new StringBuilder();
        tokens.forEach(t -> sb.append('/').append(t.replace("~", "~0").replace("/", "~1")));
        return sb.toString();
    }

    private static ApiException failed(int index, String why) {
        return new ApiException(422, "Invalid", "the server rejected our request due to an error in our request: "
                + "json patch operation " + index + ": " + why, null, null, null, null);
    }
}
