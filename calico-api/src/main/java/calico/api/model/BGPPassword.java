package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * Where a BGP session password comes from: a key of a Kubernetes Secret in calico-node's
 * namespace. The password itself never appears in the resource.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record BGPPassword(SecretKeyRef secretKeyRef) {

    public static BGPPassword fromSecret(String name, String key) {
        return new BGPPassword(new SecretKeyRef(name, key, null));
    }

    /** A Kubernetes SecretKeySelector: the secret's name, the key within it, and whether it may be missing. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record SecretKeyRef(String name, String key, Boolean optional) {
    }
}
