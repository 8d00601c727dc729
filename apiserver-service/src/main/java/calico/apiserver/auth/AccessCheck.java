package calico.apiserver.auth;

/** One authorization decision source: the local RBAC rules or the cluster's SubjectAccessReview. */
@FunctionalInterface
public interface AccessCheck {
    boolean allows(User user, String verb, String group, String resource, String namespace, String name);
}
