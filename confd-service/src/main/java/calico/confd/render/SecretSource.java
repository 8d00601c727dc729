package calico.confd.render;

import java.util.Optional;

/** Where BGP passwords come from: one key of a Kubernetes Secret in calico-node's namespace. */
@FunctionalInterface
public interface SecretSource {

    /** {@return the key's value}, or empty when the secret or key does not exist */
    Optional<String> get(String secretName, String key);

    static SecretSource none() {
        return (n, k) -> Optional.empty();
    }
}
