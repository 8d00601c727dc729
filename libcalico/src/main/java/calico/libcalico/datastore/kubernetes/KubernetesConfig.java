package calico.libcalico.datastore.kubernetes;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * How to reach the Kubernetes API server, read from Calico's environment variables:
 * {@code KUBECONFIG} (a kubeconfig file) or, without it, fabric8's autodetection (in-cluster
 * service account when {@code KUBERNETES_SERVICE_HOST} is set, else {@code ~/.kube/config});
 * {@code K8S_API_ENDPOINT} overrides the server URL either way.
 *
 * @param client           the fabric8 client configuration
 * @param bookmarkInterval how often each watch reports progress ({@code Bookmark}) when nothing changes
 * @param listPageSize     objects per list request ({@code limit}; later pages follow {@code continue}),
 *                         500 as client-go's pager
 * @param watchTimeout     the {@code timeoutSeconds} of each Kubernetes watch request, after which
 *                         the stream is resumed from its last revision (client-go's reflector uses 5 to
 *                         10 minutes); {@code null}: none asked, the API server ends it after its own
 *                         {@code --min-request-timeout} (30 to 60 minutes)
 */
public record KubernetesConfig(Config client, Duration bookmarkInterval, int listPageSize, Duration watchTimeout) {

    public static final Duration DEFAULT_BOOKMARK_INTERVAL = Duration.ofSeconds(5);
    public static final int DEFAULT_LIST_PAGE_SIZE = 500;

    public KubernetesConfig {
        if (client == null) {
            throw new IllegalArgumentException("client: required");
        }
        if (bookmarkInterval == null || bookmarkInterval.isNegative() || bookmarkInterval.isZero()) {
            throw new IllegalArgumentException("bookmarkInterval: must be positive, got " + bookmarkInterval);
        }
        if (listPageSize < 1) {
            throw new IllegalArgumentException("listPageSize: must be at least 1, got " + listPageSize);
        }
        if (watchTimeout != null && watchTimeout.toSeconds() < 1) {
            throw new IllegalArgumentException("watchTimeout: must be at least 1 s (or null for the server's), got "
                    + watchTimeout);
        }
    }

    /** {@return the configuration for a client built by the caller} (tests: the mock server's). */
    public static KubernetesConfig of(Config client) {
        return new KubernetesConfig(client, DEFAULT_BOOKMARK_INTERVAL, DEFAULT_LIST_PAGE_SIZE, null);
    }

    /** {@return this configuration with another client configuration} (e.g. other retries). */
    public KubernetesConfig withClient(Config other) {
        return new KubernetesConfig(other, bookmarkInterval, listPageSize, watchTimeout);
    }

    public KubernetesConfig withBookmarkInterval(Duration interval) {
        return new KubernetesConfig(client, interval, listPageSize, watchTimeout);
    }

    public KubernetesConfig withListPageSize(int pageSize) {
        return new KubernetesConfig(client, bookmarkInterval, pageSize, watchTimeout);
    }

    public KubernetesConfig withWatchTimeout(Duration timeout) {
        return new KubernetesConfig(client, bookmarkInterval, listPageSize, timeout);
    }

    /** Reads the configuration; every error names the variable at fault. */
    public static KubernetesConfig fromEnvironment(Map<String, String> env) {
        String endpoint = env.getOrDefault("K8S_API_ENDPOINT", "").trim();
        if (!endpoint.isEmpty() && !endpoint.startsWith("https://") && !endpoint.startsWith("http://")) {
            throw new IllegalArgumentException("K8S_API_ENDPOINT: \"" + endpoint + "\" must be an http(s) URL");
        }
        String kubeconfig = env.getOrDefault("KUBECONFIG", "").trim();
        Config config;
        if (!kubeconfig.isEmpty()) {
            // kubectl allows a path list; Calico reads one file.
            Path file = Path.of(kubeconfig.split(java.io.File.pathSeparator)[0]);
            if (!Files.isRegularFile(file) || !Files.isReadable(file)) {
                throw new IllegalArgumentException("KUBECONFIG: \"" + file + "\" is not a readable file");
            }
            try {
                config = Config.fromKubeconfig(file.toFile()); // relative paths in it resolve against its folder
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("KUBECONFIG: \"" + file + "\" is not a usable kubeconfig: "
                        + e.getMessage(), e);
            }
        } else {
            boolean inCluster = !env.getOrDefault("KUBERNETES_SERVICE_HOST", "").isBlank();
            Path home = Path.of(System.getProperty("user.home"), ".kube", "config");
            if (!inCluster && !Files.isRegularFile(home) && env.getOrDefault("K8S_API_ENDPOINT", "").isBlank()) {
                throw new IllegalArgumentException("KUBECONFIG: not set, and no cluster to detect (no "
                        + "KUBERNETES_SERVICE_HOST, no " + home + ", no K8S_API_ENDPOINT); "
                        + "DATASTORE_TYPE=kubernetes needs one of them");
            }
            config = Config.autoConfigure(null);
        }
        if (!endpoint.isEmpty()) {
            config = new ConfigBuilder(config).withMasterUrl(endpoint).build();
        }
        // HTTP streaming watches, as client-go (and so Calico) uses them; fabric8 would try a
        // websocket first. One transport, and the one the tests exercise.
        return of(new ConfigBuilder(config).withOnlyHttpWatches(true).build());
    }
}
