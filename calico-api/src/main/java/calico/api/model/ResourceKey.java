package calico.api.model;

import java.util.Objects;

/**
 * Identifies one resource: its kind, its namespace ({@code null} for cluster-scoped kinds)
 * and its name.
 */
public record ResourceKey(ResourceKind kind, String namespace, String name) {

    public ResourceKey {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(name, "name");
        if (!kind.namespaced()) {
            namespace = null;
        }
    }

    public static ResourceKey of(ResourceKind kind, String name) {
        return new ResourceKey(kind, null, name);
    }

    public static ResourceKey of(ResourceKind kind, String namespace, String name) {
        return new ResourceKey(kind, namespace, name);
    }

    @Override
    public String toString() {
        return kind.kind() + "(" + (namespace == null ? "" : namespace + "/") + name + ")";
    }
}
