package calico.libcalico.datastore.kubernetes;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.util.function.Supplier;

/**
 * A service's Kubernetes API client and whether the service owns it: a client defined elsewhere
 * (a test's mock server, an application's own) is used and left open; otherwise one is built from
 * the service's settings and closed with the service ({@link #close()}, which a Spring
 * {@code @Bean} of this type gets called on shutdown).
 *
 * @param client the client to use
 * @param owned  whether {@link #close()} closes it
 */
public record OwnedKubernetesClient(KubernetesClient client, boolean owned) implements AutoCloseable {

    /**
     * {@return {@code given} when there is one (not owned), else a client built from {@code config}} (owned).
     *
     * @param given  a client defined elsewhere, or {@code null}
     * @param config the configuration to build one from; read only when {@code given} is {@code null}
     */
    public static OwnedKubernetesClient of(KubernetesClient given, Supplier<Config> config) {
        return given != null ? new OwnedKubernetesClient(given, false)
                : new OwnedKubernetesClient(new KubernetesClientBuilder().withConfig(config.get()).build(), true);
    }

    @Override
    public void close() {
        if (owned) {
            client.close();
        }
    }
}
