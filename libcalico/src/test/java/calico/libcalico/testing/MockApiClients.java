package calico.libcalico.testing;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.time.Duration;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

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

    /**
     * {@return a load-tolerant client of a test class's mock, made before its tests and closed after them}:
     * {@code @RegisterExtension static final MockApiClients.PerClass API = MockApiClients.perClass(() -> client);}
     * after the {@code client} field the mock's extension fills (it runs first: a class's own extensions come
     * before those of its fields).
     */
    public static PerClass perClass(Supplier<KubernetesClient> mock) {
        return new PerClass(mock);
    }

    /** See {@link #perClass}. */
    public static final class PerClass implements BeforeAllCallback, AfterAllCallback, Supplier<KubernetesClient> {

        private final Supplier<KubernetesClient> mock;
        private KubernetesClient client;

        private PerClass(Supplier<KubernetesClient> mock) {
            this.mock = mock;
        }

        @Override
        public void beforeAll(ExtensionContext context) {
            client = loadTolerant(mock.get());
        }

        @Override
        public void afterAll(ExtensionContext context) {
            client.close();
        }

        /** {@return the client} (between the class's first and last test) */
        @Override
        public KubernetesClient get() {
            if (client == null) {
                throw new IllegalStateException("MockApiClients.perClass: no client outside the class's tests");
            }
            return client;
        }
    }
}
