package calico.apiserver.auth;

import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * An authenticated caller: user name, uid, groups and extra attributes (as Kubernetes'
 * user.Info). Every authenticated user is in {@code system:authenticated}, as k8s.io/apiserver's
 * authenticated-group adder makes it, so RBAC bindings to that group apply to it.
 */
public record User(String name, String uid, List<String> groups, Map<String, List<String>> extra) {

    public static final String MASTERS = "system:masters";
    public static final String AUTHENTICATED = "system:authenticated";

    public User {
        groups = groups == null ? List.of() : List.copyOf(groups);
        if (!groups.contains(AUTHENTICATED)) {
            groups = Stream.concat(groups.stream(), Stream.of(AUTHENTICATED)).toList();
        }
        uid = uid == null ? "" : uid;
        extra = extra == null ? Map.of() : Map.copyOf(extra);
    }

    public User(String name, String uid, List<String> groups) {
        this(name, uid, groups, Map.of());
    }

    public boolean isMaster() {
        return groups.contains(MASTERS);
    }
}
