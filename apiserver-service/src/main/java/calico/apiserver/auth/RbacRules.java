package calico.apiserver.auth;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The local authorizer ({@code --authorization-rules-file}): RBAC Role, ClusterRole, RoleBinding
 * and ClusterRoleBinding documents, evaluated as Kubernetes RBAC does (a ClusterRoleBinding grants
 * everywhere, a RoleBinding only in its namespace; rules are unions; {@code *} matches all).
 * Members of {@code system:masters} may do everything.
 */
public final class RbacRules implements AccessCheck {

    record Rule(List<String> apiGroups, List<String> resources, List<String> verbs, List<String> resourceNames) {
        boolean allows(String verb, String group, String resource, String name) {
            return has(verbs, verb) && has(apiGroups, group) && has(resources, resource)
                    && (resourceNames.isEmpty() || (name != null && matchesName(name)));
        }

        private boolean matchesName(String name) {
            for (String n : resourceNames) {
                if (n.equals(name) || (n.endsWith("*") && name.startsWith(n.substring(0, n.length() - 1)))) {
                    return true;
                }
            }
            return false;
        }

        private static boolean has(List<String> list, String v) {
            return list.contains("*") || list.contains(v);
        }
    }

    record Subject(String kind, String name, String namespace) {
        boolean matches(User u) {
            return switch (kind) {
                case "User" -> name.equals(u.name());
                case "Group" -> u.groups().contains(name);
                case "ServiceAccount" -> u.name().equals("system:serviceaccount:" + namespace + ":" + name);
                default -> false;
            };
        }
    }

    record Binding(String namespace, String roleKind, String roleName, List<Subject> subjects) {
    }

    private final Map<String, List<Rule>> clusterRoles;
    private final Map<String, List<Rule>> roles; // key: namespace/name
    private final List<Binding> bindings;

    private RbacRules(Map<String, List<Rule>> clusterRoles, Map<String, List<Rule>> roles, List<Binding> bindings) {
        this.clusterRoles = clusterRoles;
        this.roles = roles;
        this.bindings = bindings;
    }

    public static RbacRules none() {
        return new RbacRules(Map.of(), Map.of(), List.of());
    }

    public static RbacRules read(Path file) {
        try {
            return parse(Files.readString(file));
        } catch (IOException e) {
            throw new IllegalArgumentException("--authorization-rules-file " + file + ": " + e.getMessage(), e);
        }
    }

    public static RbacRules parse(String yaml) {
        Map<String, List<Rule>> clusterRoles = new HashMap<>();
        Map<String, List<Rule>> roles = new HashMap<>();
        List<Binding> bindings = new ArrayList<>();
        YAMLMapper m = new YAMLMapper();
        try (var parser = m.getFactory().createParser(yaml)) {
            var it = m.readValues(parser, JsonNode.class);
            while (it.hasNextValue()) {
                JsonNode d = it.nextValue();
                if (d == null || d.isNull() || d.isMissingNode()) {
                    continue;
                }
                String kind = d.path("kind").asText("");
                String name = d.path("metadata").path("name").asText("");
                String ns = d.path("metadata").path("namespace").asText("");
                switch (kind) {
                    case "ClusterRole" -> clusterRoles.put(name, rules(d));
                    case "Role" -> roles.put(ns + "/" + name, rules(d));
                    case "ClusterRoleBinding", "RoleBinding" -> {
                        List<Subject> subjects = new ArrayList<>();
                        d.path("subjects").forEach(s -> subjects.add(new Subject(s.path("kind").asText(),
                                s.path("name").asText(), s.path("namespace").asText(""))));
                        bindings.add(new Binding(kind.equals("RoleBinding") ? ns : null,
                                d.path("roleRef").path("kind").asText(), d.path("roleRef").path("name").asText(), subjects));
                    }
                    case "List" -> {
                        // not supported: one object per document
                        throw new IllegalArgumentException("--authorization-rules-file: write one object per YAML document");
                    }
                    default -> throw new IllegalArgumentException("--authorization-rules-file: unsupported kind \"" + kind
                            + "\" (expected Role, ClusterRole, RoleBinding, ClusterRoleBinding)");
                }
            }
        } catch (IOException e) {
            throw new IllegalArgumentException("--authorization-rules-file: " + e.getMessage(), e);
        }
        return new RbacRules(clusterRoles, roles, bindings);
    }

    private static List<Rule> rules(JsonNode d) {
        List<Rule> out = new ArrayList<>();
        d.path("rules").forEach(r -> out.add(new Rule(list(r.path("apiGroups")), list(r.path("resources")),
                list(r.path("verbs")), list(r.path("resourceNames")))));
        return out;
    }

    private static List<String> list(JsonNode n) {
        List<String> out = new ArrayList<>();
        n.forEach(v -> out.add(v.asText()));
        return out;
    }

    /** {@return whether {@code user} may do {@code verb} on the resource}; namespace null for cluster scope. */
    @Override
    public boolean allows(User user, String verb, String group, String resource, String namespace, String name) {
        if (user.isMaster()) {
            return true;
        }
        for (Binding b : bindings) {
            if (b.namespace() != null && !b.namespace().equals(namespace)) {
                continue;
            }
            if (b.subjects().stream().noneMatch(s -> s.matches(user))) {
                continue;
            }
            List<Rule> rules = b.roleKind().equals("ClusterRole") ? clusterRoles.get(b.roleName())
                    : roles.get(b.namespace() + "/" + b.roleName());
            if (rules != null && rules.stream().anyMatch(r -> r.allows(verb, group, resource, name))) {
                return true;
            }
        }
        return false;
    }
}
