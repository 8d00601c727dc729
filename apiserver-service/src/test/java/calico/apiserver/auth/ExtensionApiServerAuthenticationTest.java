package calico.apiserver.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.libcalico.testing.TestCertificates;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The authentication ConfigMap as kube-apiserver 1.37 writes it (keys and JSON arrays copied
 * from a real one), read at start and followed while it changes; fabric8's mock API in CRUD mode
 * stands in for the cluster (the real one: {@code AggregationTest}, whose server has no CA flags).
 */
@EnableKubernetesMockClient(crud = true)
class ExtensionApiServerAuthenticationTest {

    static KubernetesClient client;
    static String caPem;

    @BeforeAll
    static void certificates() throws Exception {
        caPem = Files.readString(TestCertificates.generate(Files.createTempDirectory("ext-auth")).caCert());
    }

    @AfterEach
    void removeConfigMap() {
        client.configMaps().inNamespace("kube-system").withName(ExtensionApiServerAuthentication.NAME).delete();
    }

    static ConfigMap configMap(String allowedNames) {
        Map<String, String> data = new LinkedHashMap<>();
        data.put("client-ca-file", caPem);
        data.put("requestheader-allowed-names", allowedNames);
        data.put("requestheader-client-ca-file", caPem);
        data.put("requestheader-extra-headers-prefix", "[\"X-Remote-Extra-\"]");
        data.put("requestheader-group-headers", "[\"X-Remote-Group\"]");
        data.put("requestheader-username-headers", "[\"X-Remote-User\"]");
        return new ConfigMapBuilder().withNewMetadata().withName(ExtensionApiServerAuthentication.NAME)
                .withNamespace("kube-system").endMetadata().withData(data).build();
    }

    static void write(ConfigMap cm) {
        client.configMaps().inNamespace("kube-system").resource(cm).createOr(c -> c.update());
    }

    @Test
    void readsTheClusterSettingsAndFollowsTheirChanges() {
        write(configMap("[\"front-proxy-client\"]"));
        try (var cluster = ExtensionApiServerAuthentication.start(client, false)) {
            RequestHeaderConfig proxy = cluster.requestHeader().orElseThrow();
            assertThat(proxy.allowedNames()).containsExactly("front-proxy-client");
            assertThat(proxy.userHeaders()).containsExactly("X-Remote-User");
            assertThat(proxy.groupHeaders()).containsExactly("X-Remote-Group");
            assertThat(proxy.extraPrefixes()).containsExactly("X-Remote-Extra-");
            assertThat(proxy.uidHeaders()).isEmpty();
            assertThat(proxy.cas()).hasSize(1);
            assertThat(cluster.clientCas()).hasSize(1);

            write(configMap("[\"another-proxy\"]"));
            await(() -> cluster.requestHeader().orElseThrow().allowedNames().equals(List.of("another-proxy")));

            // A broken value keeps what was there (and names the key when read at start).
            write(configMap("front-proxy-client"));
            assertThatThrownBy(() -> ExtensionApiServerAuthentication.parse(configMap("front-proxy-client")))
                    .hasMessageContaining("key requestheader-allowed-names: not a JSON array of strings");
            write(configMap("[\"third-proxy\"]"));
            await(() -> cluster.requestHeader().orElseThrow().allowedNames().equals(List.of("third-proxy")));

            removeConfigMap();
            await(() -> cluster.requestHeader().isEmpty() && cluster.clientCas().isEmpty());
        }
    }

    @Test
    void aMissingConfigMapStopsTheStartUnlessTolerated() {
        assertThatThrownBy(() -> ExtensionApiServerAuthentication.start(client, false))
                .hasMessageContaining("configmap kube-system/extension-apiserver-authentication not found")
                .hasMessageContaining("--authentication-tolerate-lookup-failure");
        try (var cluster = ExtensionApiServerAuthentication.start(client, true)) {
            assertThat(cluster.requestHeader()).isEmpty();
            write(configMap("[]"));
            await(() -> cluster.requestHeader().isPresent());
            assertThat(cluster.requestHeader().orElseThrow().allowedNames()).as("[]: any name").isEmpty();
        }
    }

    static void await(BooleanSupplier condition) {
        Instant end = Instant.now().plus(Duration.ofSeconds(20));
        while (!condition.getAsBoolean()) {
            assertThat(Instant.now()).as("condition within 20 s").isBefore(end);
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }
}
