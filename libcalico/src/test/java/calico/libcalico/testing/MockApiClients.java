package calico.libcalico.testing;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.time.Duration;

/**
 * A client of a fabric8 mock API server ({@code @EnableKubernetesMockClient}) for a loaded
 * machine. The mock's own client keeps fabric8's defaults: a 10 s request timeout and up to 10
 * retries of any request that failed or timed out, writes included. On a machine at load 20 a
 * test's first POST outlived the timeout; the mock had created the object, the retry was answered
 * 409 AlreadyExists (confd's {@code KubernetesServicesTest}, both POSTs in the mock's log). This
 * client waits as long as a test's own awaits do and never sends a request twice, so a slow
 * server is slow, not wrong.
 */
public final class MockApiClients {

    /** As long as the tests' awaits: a request is never what gives up first. */
    public static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(60);

    private MockApiClients() {
    }

    /** {@return a new client of {@code mock}'s server} (the caller closes it) that never retries and waits {@link #REQUEST_TIMEOUT} */
    public static KubernetesClient loadTolerant(KubernetesClient mock) {
        Config config = new ConfigBuilder(mock.getConfiguration())
                .withRequestTimeout((int) REQUEST_TIMEOUT.toMillis())
                .withRequestRetryBackoffLimit(0)
                .build();
        return new KubernetesClientBuilder().withConfig(config).build();
    }
}
