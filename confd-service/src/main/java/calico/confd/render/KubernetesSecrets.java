package calico.confd.render;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Optional;

/**
 * BGP passwords read from Kubernetes Secrets in calico-node's namespace, as Calico's confd
 * reads them. Read on every render, so a rotated secret applies at the next pass. An API
 * failure is not "missing": it skips the peer with the API's message.
 */
public final class KubernetesSecrets implements SecretSource {

    private final KubernetesClient client;
    private final String namespace;

    public KubernetesSecrets(KubernetesClient client, String namespace) {
        this.client = client;
        this.namespace = namespace;
    }

    @Override
    public Optional<String> get(String secretName, String key) {
        Secret s;
        try {
            s = client.secrets().inNamespace(namespace).withName(secretName).get();
        } catch (KubernetesClientException e) {
            throw new IllegalArgumentException("cannot read secret " + namespace + "/" + secretName + ": "
                    + e.getMessage(), e);
        }
        if (s == null) {
            return Optional.empty();
        }
        if (s.getData() != null && s.getData().containsKey(key)) {
            return Optional.of(new String(Base64.getDecoder().decode(s.getData().get(key)), StandardCharsets.UTF_8));
        }
        if (s.getStringData() != null && s.getStringData().containsKey(key)) {
            return Optional.of(s.getStringData().get(key));
        }
        return Optional.empty();
    }
}
