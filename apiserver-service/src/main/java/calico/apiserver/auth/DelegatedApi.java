package calico.apiserver.auth;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The Kubernetes API an aggregated server delegates to ({@code --authentication-kubeconfig},
 * {@code --authorization-kubeconfig}): posts reviews and reads the authentication ConfigMap,
 * counting each review as k8s.io/apiserver does ({@code apiserver_delegated_authn_request_total}
 * and {@code apiserver_delegated_authz_request_total} by status code, with their latency).
 */
final class DelegatedApi implements AutoCloseable {

    static final ObjectMapper JSON = new ObjectMapper();

    private final KubernetesClient client;
    private final MeterRegistry metrics;
    private final String metricPrefix;

    /** {@code metricPrefix}: {@code apiserver_delegated_authn} or {@code apiserver_delegated_authz}. */
    DelegatedApi(Path kubeconfig, String flag, MeterRegistry metrics, String metricPrefix) {
        try {
            Config config = Config.fromKubeconfig(Files.readString(kubeconfig));
            this.client = new KubernetesClientBuilder().withConfig(config).build();
        } catch (IOException e) {
            throw new UncheckedIOException(flag + " " + kubeconfig + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(flag + " " + kubeconfig + ": not a usable kubeconfig: " + e.getMessage(), e);
        }
        this.metrics = metrics;
        this.metricPrefix = metricPrefix;
    }

    KubernetesClient client() {
        return client;
    }

    /** Posts {@code review} to {@code path} ({@code /apis/...}) and {@return the answer's status}; throws when unanswered. */
    JsonNode review(String path, JsonNode review) {
        long start = System.nanoTime();
        String code = "<error>";
        try {
            String answer = client.raw(client.getMasterUrl().toString().replaceAll("/$", "") + path, "POST", review);
            if (answer == null) {
                code = "404";
                throw new IllegalStateException(path + ": not found");
            }
            code = "201";
            return JSON.readTree(answer).path("status");
        } catch (KubernetesClientException e) {
            code = e.getCode() > 0 ? Integer.toString(e.getCode()) : "<error>";
            throw e;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            metrics.counter(metricPrefix + "_request_total", "code", code).increment();
            Timer.builder(metricPrefix + "_request_duration_seconds").tag("code", code).register(metrics)
                    .record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
        }
    }

    @Override
    public void close() {
        client.close();
    }
}
