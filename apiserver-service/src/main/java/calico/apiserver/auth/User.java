package calico.apiserver.auth;

import java.util.List;

/** An authenticated caller: user name, uid and groups (as Kubernetes' user.Info). */
public record User(String name, String uid, List<String> groups) {
    public User {
        groups = groups == null ? List.of() : List.copyOf(groups);
    }

    public static final String MASTERS = "system:masters";

    public boolean isMaster() {
        return groups.contains(MASTERS);
    }
}
