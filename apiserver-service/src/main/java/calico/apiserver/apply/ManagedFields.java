package calico.apiserver.apply;

import calico.api.model.Resource;
import calico.apiserver.errors.ApiException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Field ownership as kube-apiserver keeps it in {@code metadata.managedFields}, for the types
 * Calico serves (structs and string maps are granular, every list is atomic: no Calico type has
 * list merge keys).
 *
 * <ul>
 *   <li>A field is a path of object keys to a scalar, a list, or an empty object; identity and
 *       server-kept fields ({@code apiVersion}, {@code kind}, {@code metadata.name|namespace|uid|
 *       resourceVersion|creationTimestamp|generation|managedFields}) are owned by nobody.</li>
 *   <li><b>Update</b> (create, update, every non-apply patch): the manager takes every field whose
 *       value it set or changed; other managers lose those fields; removed fields leave every set.</li>
 *   <li><b>Apply</b>: the applied configuration's fields whose value differs from the live one and
 *       that another manager owns are conflicts (409, kube's message) unless forced, when the
 *       other managers lose them. After the merge, fields the applier owned before, no longer
 *       applies and nobody else owns are removed from the object. The applier's set becomes
 *       exactly the applied fields.</li>
 *   <li>Managers with an empty set are dropped; entries are kept in their order, new ones last.</li>
 * </ul>
 * Defaults the datastore fills in are computed after this and so are owned by nobody.
 */
public final class ManagedFields {

    private static final JsonNodeFactory F = JsonNodeFactory.instance;
    private static final Set<String> UNOWNED_METADATA = Set.of("name", "namespace", "uid", "resourceVersion",
            "creationTimestamp", "generation", "managedFields", "deletionTimestamp", "selfLink", "generateName");

    private ManagedFields() {
    }

    /** A field: the object keys from the root. */
    public record Path(List<String> keys) {
        public Path {
            keys = List.copyOf(keys);
        }

        @Override
        public String toString() {
            StringBuilder b = new StringBuilder();
            keys.forEach(k -> b.append('.').append(k));
            return b.toString();
        }
    }

    private record Entry(String manager, String operation, String apiVersion, String time, Set<Path> fields,
                         String subresource) {
    }

    // ---- the two operations ----------------------------------------------------------------------

    /**
     * Records an Update by {@code manager} that turned {@code before} (null on create) into
     * {@code after}; writes the new {@code managedFields} into {@code after}'s metadata.
     */
    public static void update(ObjectNode before, ObjectNode after, String manager, Instant now) {
        List<Entry> entries = before == null ? new ArrayList<>() : read(before);
        Set<Path> now1 = fields(after);
        Set<Path> changed = new LinkedHashSet<>();
        for (Path p : now1) {
            if (before == null || !same(valueAt(before, p), valueAt(after, p))) {
                changed.add(p);
            }
        }
        List<Entry> out = new ArrayList<>();
        Set<Path> mine = new LinkedHashSet<>(changed);
        Entry previous = null;
        for (Entry e : entries) {
            Set<Path> kept = new LinkedHashSet<>(e.fields());
            kept.retainAll(now1);
            if (e.manager().equals(manager) && e.operation().equals("Update") && e.subresource() == null) {
                mine.addAll(kept);
                previous = e;
                continue;
            }
            kept.removeAll(changed);
            if (!kept.isEmpty()) {
                out.add(new Entry(e.manager(), e.operation(), e.apiVersion(), e.time(), kept, e.subresource()));
            }
        }
        if (!mine.isEmpty()) {
            // The time says when the manager's set last changed: an update that changes none of it keeps it.
            String at = previous != null && previous.fields().equals(mine) ? previous.time() : time(now);
            out.add(new Entry(manager, "Update", Resource.API_VERSION, at, mine, null));
        }
        write(after, out);
    }

    /**
     * Server-side apply of {@code config} by {@code manager} to {@code live} (null when it does
     * not exist): checks conflicts, then returns the merged object with its new managedFields.
     *
     * @param merged the live object with the configuration merged in (or the configuration, on create)
     * @throws ApiException 409 Conflict listing every conflict, unless {@code force}
     */
    public static ObjectNode apply(ObjectNode live, JsonNode config, ObjectNode merged, String manager, boolean force,
                                   Instant now) {
        List<Entry> entries = live == null ? new ArrayList<>() : read(live);
        Set<Path> applied = fields(config);
        Map<Path, String> conflicts = new LinkedHashMap<>();
        Map<String, Entry> conflictOwner = new LinkedHashMap<>();
        for (Entry e : entries) {
            if (e.manager().equals(manager) && e.operation().equals("Apply")) {
                continue;
            }
            for (Path p : applied) {
                if (e.fields().contains(p) && live != null && !same(valueAt(live, p), valueAt(config, p))) {
                    conflicts.putIfAbsent(p, key(e));
                    conflictOwner.putIfAbsent(key(e), e);
                }
            }
        }
        if (!conflicts.isEmpty() && !force) {
            throw conflict(conflicts, conflictOwner);
        }
        Set<Path> previouslyApplied = new LinkedHashSet<>();
        String previousTime = null;
        Set<Path> ownedByOthers = new LinkedHashSet<>();
        List<Entry> out = new ArrayList<>();
        for (Entry e : entries) {
            if (e.manager().equals(manager) && e.operation().equals("Apply")) {
                previouslyApplied.addAll(e.fields());
                previousTime = e.time();
                continue;
            }
            Set<Path> kept = new LinkedHashSet<>(e.fields());
            kept.removeAll(conflicts.keySet()); // forced: the applier takes them
            ownedByOthers.addAll(kept);
            if (!kept.isEmpty()) {
                out.add(new Entry(e.manager(), e.operation(), e.apiVersion(), e.time(), kept, e.subresource()));
            }
        }
        ObjectNode result = merged.deepCopy();
        for (Path p : previouslyApplied) {
            if (!applied.contains(p) && !ownedByOthers.contains(p)) {
                remove(result, p);
            }
        }
        if (!applied.isEmpty()) {
            String at = previousTime != null && previouslyApplied.equals(applied) ? previousTime : time(now);
            out.add(new Entry(manager, "Apply", Resource.API_VERSION, at, applied, null));
        }
        // Fields the removal left without a value leave every set.
        Set<Path> present = fields(result);
        List<Entry> pruned = new ArrayList<>();
        for (Entry e : out) {
            Set<Path> kept = new LinkedHashSet<>(e.fields());
            if (!e.operation().equals("Apply")) {
                kept.retainAll(present);
            }
            if (!kept.isEmpty()) {
                pruned.add(new Entry(e.manager(), e.operation(), e.apiVersion(), e.time(), kept, e.subresource()));
            }
        }
        write(result, pruned);
        return result;
    }

    /** {@return whether the request's body sets managedFields itself} (then the server keeps its value as sent). */
    public static boolean setByClient(JsonNode body) {
        return body.path("metadata").has("managedFields");
    }

    // ---- conflicts -------------------------------------------------------------------------------

    private static String key(Entry e) {
        return e.manager() + "\u0000" + e.operation() + "\u0000" + e.apiVersion() + "\u0000" + e.time();
    }

    private static String printManager(Entry e) {
        String m = "\"" + e.manager() + "\"";
        if (e.operation().equals("Update")) {
            return m + " using " + e.apiVersion() + (e.time() == null ? "" : " at " + e.time());
        }
        return m;
    }

    private static ApiException conflict(Map<Path, String> conflicts, Map<String, Entry> owners) {
        List<ApiException.Cause> causes = new ArrayList<>();
        conflicts.forEach((p, k) -> causes.add(new ApiException.Cause("FieldManagerConflict",
                "conflict with " + printManager(owners.get(k)), p.toString())));
        String message;
        if (conflicts.size() == 1) {
            Map.Entry<Path, String> only = conflicts.entrySet().iterator().next();
            message = "Apply failed with 1 conflict: conflict with " + printManager(owners.get(only.getValue())) + ": "
                    + only.getKey();
        } else {
            TreeMap<String, List<Path>> byManager = new TreeMap<>();
            conflicts.forEach((p, k) -> byManager.computeIfAbsent(printManager(owners.get(k)), x -> new ArrayList<>()).add(p));
            List<String> lines = new ArrayList<>();
            byManager.forEach((m, paths) -> {
                lines.add("conflicts with " + m + ":");
                paths.forEach(p -> lines.add("- " + p));
            });
            message = "Apply failed with " + conflicts.size() + " conflicts: " + String.join("\n", lines);
        }
        return new ApiException(409, "Conflict", message, null, null, null, causes);
    }

    // ---- field sets ------------------------------------------------------------------------------

    /** {@return the fields an object (or an applied configuration) sets}. */
    public static Set<Path> fields(JsonNode obj) {
        Set<Path> out = new LinkedHashSet<>();
        if (!(obj instanceof ObjectNode o)) {
            return out;
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = o.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> f = it.next();
            String k = f.getKey();
            if (k.equals("apiVersion") || k.equals("kind")) {
                continue;
            }
            if (k.equals("metadata") && f.getValue() instanceof ObjectNode meta) {
                for (Iterator<Map.Entry<String, JsonNode>> m = meta.fields(); m.hasNext(); ) {
                    Map.Entry<String, JsonNode> mf = m.next();
                    if (!UNOWNED_METADATA.contains(mf.getKey())) {
                        collect(mf.getValue(), List.of("metadata", mf.getKey()), out);
                    }
                }
                continue;
            }
            collect(f.getValue(), List.of(k), out);
        }
        return out;
    }

    private static void collect(JsonNode v, List<String> at, Set<Path> out) {
        if (v == null || v.isNull() || v.isMissingNode()) {
            return;
        }
        if (v instanceof ObjectNode o && !o.isEmpty()) {
            for (Iterator<Map.Entry<String, JsonNode>> it = o.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> f = it.next();
                List<String> next = new ArrayList<>(at);
                next.add(f.getKey());
                collect(f.getValue(), next, out);
            }
            return;
        }
        out.add(new Path(at));
    }

    /** Equal values; numbers by value (an order of 100 equals 100.0). */
    static boolean same(JsonNode a, JsonNode b) {
        if (a == null || b == null) {
            return a == b;
        }
        return a.equals((x, y) -> {
            if (x.isNumber() && y.isNumber()) {
                return x.decimalValue().compareTo(y.decimalValue());
            }
            return x.equals(y) ? 0 : 1;
        }, b);
    }

    static JsonNode valueAt(JsonNode root, Path p) {
        JsonNode n = root;
        for (String k : p.keys()) {
            n = n == null ? null : n.get(k);
        }
        return n;
    }

    /** Removes a field and then every object it leaves empty (except the top-level ones). */
    static void remove(ObjectNode root, Path p) {
        List<ObjectNode> chain = new ArrayList<>();
        JsonNode n = root;
        for (int i = 0; i < p.keys().size() - 1; i++) {
            chain.add((ObjectNode) n);
            n = n.get(p.keys().get(i));
            if (!(n instanceof ObjectNode)) {
                return;
            }
        }
        ((ObjectNode) n).remove(p.keys().get(p.keys().size() - 1));
        for (int i = chain.size() - 1; i >= 1; i--) {
            ObjectNode child = (ObjectNode) chain.get(i).get(p.keys().get(i));
            if (child.isEmpty()) {
                chain.get(i).remove(p.keys().get(i));
            }
        }
    }

    // ---- FieldsV1 --------------------------------------------------------------------------------

    static ObjectNode toFieldsV1(Set<Path> fields) {
        ObjectNode root = F.objectNode();
        for (Path p : fields) {
            ObjectNode n = root;
            for (String k : p.keys()) {
                String fk = "f:" + k;
                n = n.has(fk) ? (ObjectNode) n.get(fk) : n.putObject(fk);
            }
        }
        return root;
    }

    static Set<Path> fromFieldsV1(JsonNode v1) {
        Set<Path> out = new LinkedHashSet<>();
        walk(v1, new ArrayList<>(), out);
        return out;
    }

    private static void walk(JsonNode n, List<String> at, Set<Path> out) {
        boolean child = false;
        for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> f = it.next();
            if (f.getKey().startsWith("f:")) {
                child = true;
                List<String> next = new ArrayList<>(at);
                next.add(f.getKey().substring(2));
                walk(f.getValue(), next, out);
            }
        }
        if (!child && !at.isEmpty()) {
            out.add(new Path(at));
        }
    }

    private static List<Entry> read(ObjectNode obj) {
        List<Entry> out = new ArrayList<>();
        for (JsonNode e : obj.path("metadata").path("managedFields")) {
            out.add(new Entry(e.path("manager").asText(""), e.path("operation").asText("Update"),
                    e.path("apiVersion").asText(Resource.API_VERSION), e.hasNonNull("time") ? e.path("time").asText() : null,
                    fromFieldsV1(e.path("fieldsV1")), e.hasNonNull("subresource") ? e.path("subresource").asText() : null));
        }
        return out;
    }

    private static void write(ObjectNode obj, List<Entry> entries) {
        ObjectNode meta = obj.get("metadata") instanceof ObjectNode m ? m : obj.putObject("metadata");
        if (entries.isEmpty()) {
            meta.remove("managedFields");
            return;
        }
        ArrayNode arr = meta.putArray("managedFields");
        for (Entry e : entries) {
            ObjectNode o = arr.addObject();
            o.put("manager", e.manager()).put("operation", e.operation()).put("apiVersion", e.apiVersion());
            if (e.time() != null) {
                o.put("time", e.time());
            }
            o.put("fieldsType", "FieldsV1");
            o.set("fieldsV1", toFieldsV1(e.fields()));
            if (e.subresource() != null) {
                o.put("subresource", e.subresource());
            }
        }
    }

    private static String time(Instant now) {
        return now.truncatedTo(ChronoUnit.SECONDS).toString();
    }
}
