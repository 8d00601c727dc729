package calico.whisker.api;

import calico.libcalico.goldmane.proto.Filter;
import calico.libcalico.goldmane.proto.MatchType;
import calico.libcalico.goldmane.proto.PolicyMatch;
import calico.libcalico.goldmane.proto.PortMatch;
import calico.libcalico.goldmane.proto.StringMatch;
import calico.whisker.web.Json;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;

/**
 * The {@code filters} query parameter (API.md) into goldmane's {@link Filter}. Strict: unknown
 * keys, wrong JSON types and unknown enum names are 400s whose message gives the JSON path
 * ({@code filters: dest_ports[0].value: ...}); value checks that goldmane makes (port range,
 * empty strings) are left to goldmane, whose INVALID_ARGUMENT is passed on.
 */
final class FilterParser {

    static final String PARAM = "filters";
    private static final Set<String> POLICY_KEYS = Set.of("kind", "tier", "namespace", "name", "action");

    private FilterParser() {
    }

    static Filter parse(String json) {
        if (json == null || json.isBlank()) {
            return Filter.getDefaultInstance();
        }
        JsonNode root;
        try {
            root = Json.MAPPER.readTree(json);
        } catch (JacksonException e) {
            throw new BadRequest(PARAM, "not valid JSON: " + e.getOriginalMessage());
        }
        if (root == null || !root.isObject()) {
            throw new BadRequest(PARAM, "must be a JSON object");
        }
        Filter.Builder f = Filter.newBuilder();
        for (Map.Entry<String, JsonNode> e : root.properties()) {
            String key = e.getKey();
            JsonNode v = e.getValue();
            switch (key) {
                case "source_names" -> strings(key, v, f::addSourceNames);
                case "source_namespaces" -> strings(key, v, f::addSourceNamespaces);
                case "dest_names" -> strings(key, v, f::addDestNames);
                case "dest_namespaces" -> strings(key, v, f::addDestNamespaces);
                case "protocols" -> strings(key, v, f::addProtocols);
                case "dest_ports" -> ports(key, v, f);
                case "actions" -> each(key, v, (p, n) -> f.addActions(enumValue(p, n, Enums.ACTIONS)));
                case "pending_actions" -> each(key, v, (p, n) -> f.addPendingActions(enumValue(p, n, Enums.ACTIONS)));
                case "reporters" -> each(key, v, (p, n) -> f.addReporters(enumValue(p, n, Enums.REPORTERS)));
                case "policies" -> each(key, v, (p, n) -> f.addPolicies(policy(p, n)));
                default -> throw bad(key, "unknown key; known: actions, dest_names, dest_namespaces, dest_ports, "
                        + "pending_actions, policies, protocols, reporters, source_names, source_namespaces");
            }
        }
        return f.build();
    }

    private interface Item {
        void accept(String path, JsonNode n);
    }

    private static BadRequest bad(String path, String reason) {
        return new BadRequest(PARAM, path + ": " + reason);
    }

    private static void each(String key, JsonNode v, Item item) {
        if (v == null || !v.isArray()) {
            throw bad(key, "must be an array");
        }
        for (int i = 0; i < v.size(); i++) {
            item.accept(key + "[" + i + "]", v.get(i));
        }
    }

    private static void strings(String key, JsonNode v, Consumer<StringMatch> add) {
        each(key, v, (path, n) -> {
            object(path, n, Set.of("type", "value"));
            JsonNode value = n.get("value");
            if (value == null || !value.isString()) {
                throw bad(path + ".value", "must be a string");
            }
            add.accept(StringMatch.newBuilder().setValue(value.asString()).setType(matchType(path, n)).build());
        });
    }

    private static void ports(String key, JsonNode v, Filter.Builder f) {
        each(key, v, (path, n) -> {
            object(path, n, Set.of("type", "value"));
            if (matchType(path, n) != MatchType.Exact) {
                throw bad(path + ".type", "ports match Exact only");
            }
            JsonNode value = n.get("value");
            if (value == null || !value.isIntegralNumber() || !value.canConvertToLong()) {
                throw bad(path + ".value", "must be an integer port number");
            }
            f.addDestPorts(PortMatch.newBuilder().setPort(value.longValue()));
        });
    }

    private static MatchType matchType(String path, JsonNode n) {
        JsonNode t = n.get("type");
        return t == null ? MatchType.Exact : enumValue(path + ".type", t, Enums.MATCH_TYPES);
    }

    private static PolicyMatch policy(String path, JsonNode n) {
        object(path, n, POLICY_KEYS);
        PolicyMatch.Builder m = PolicyMatch.newBuilder();
        for (Map.Entry<String, JsonNode> e : n.properties()) {
            String p = path + "." + e.getKey();
            if (!e.getValue().isString()) {
                throw bad(p, "must be a string");
            }
            String s = e.getValue().asString();
            switch (e.getKey()) {
                case "kind" -> {
                    if (!s.isEmpty()) {
                        m.setKind(enumValue(p, e.getValue(), Enums.KINDS));
                    }
                }
                case "action" -> {
                    if (!s.isEmpty()) {
                        m.setAction(enumValue(p, e.getValue(), Enums.ACTIONS));
                    }
                }
                case "tier" -> m.setTier(s);
                case "namespace" -> m.setNamespace(s);
                case "name" -> m.setName(s);
                default -> throw new IllegalStateException(p);
            }
        }
        return m.build();
    }

    private static void object(String path, JsonNode n, Set<String> keys) {
        if (n == null || !n.isObject()) {
            throw bad(path, "must be an object");
        }
        for (String k : n.propertyNames()) {
            if (!keys.contains(k)) {
                throw bad(path + "." + k, "unknown key; known: " + String.join(", ", keys.stream().sorted().toList()));
            }
        }
    }

    private static <E> E enumValue(String path, JsonNode n, Map<String, E> values) {
        E e = n != null && n.isString() ? values.get(n.asString()) : null;
        if (e == null) {
            throw bad(path, (n != null && n.isString() ? "'" + n.asString() + "'" : String.valueOf(n))
                    + " is not one of " + Params.names(values));
        }
        return e;
    }
}
