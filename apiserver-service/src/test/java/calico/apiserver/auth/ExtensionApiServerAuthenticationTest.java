package calico.apiserver.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.libcalico.testing.Await;
import calico.libcalico.testing.MockApiClients;
import calico.libcalico.testing.TestCertificates;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.nio.file.Files;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The authentication ConfigMap as kube-apiserver 1.37 writes it (keys and JSON arrays copied
 * from a real one), read at start and followed while it changes; fabric8's mock API in CRUD mode
 * stands in for the cluster (the real one: {@code AggregationTest}, whose server has no CA flags).
 */
@EnableKubernetesMockClient(crud = true)
class ExtensionApiServerAuthenticationTest {

    /** How long the informer may take to deliver a change of the ConfigMap. */
    static final Duration WATCH = Duration.ofSeconds(20);

    static KubernetesClient client;
    /** The test's writes: sent once, however slow the mock is under load (see {@link MockApiClients}). */
    @RegisterExtension
    static final MockApiClients.PerClass API = MockApiClients.perClass(() -> client);
    static String caPem;

    @BeforeAll
    static void certificates() throws Exception {
        caPem = Files.readString(TestCertificates.generate(Files.createTempDirectory("ext-auth")).caCert());
    }

    @AfterEach
    void removeConfigMap() {
        API.get().configMaps().inNamespace("kube-system").withName(ExtensionApiServerAuthentication.NAME).delete();
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
        API.get().configMaps().inNamespace("kube-system").resource(cm).createOr(c -> c.update());
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
            Await.until("allowed names [another-proxy]", WATCH,
                    () -> cluster.requestHeader().orElseThrow().allowedNames().equals(List.of("another-proxy")));

            // A broken value keeps what was there (and names the key when read at start).
            write(configMap("front-proxy-client"));
            assertThatThrownBy(() -> ExtensionApiServerAuthentication.parse(configMap("front-proxy-client")))
                    .hasMessageContaining("key requestheader-allowed-names: not a JSON array of strings");
            write(configMap("[\"third-proxy\"]"));
            Await.until("allowed names [third-proxy] after the broken value", WATCH,
                    () -> cluster.requestHeader().orElseThrow().allowedNames().equals(List.of("third-proxy")));

            removeConfigMap();
            Await.until("nothing trusted once the ConfigMap is deleted", WATCH,
                    () -> cluster.requestHeader().isEmpty() && cluster.clientCas().isEmpty());
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
            Await.until("the ConfigMap created after the start", WATCH, () -> cluster.requestHeader().isPresent());
            assertThat(cluster.requestHeader().orElseThrow().allowedNames()).as("[]: any name").isEmpty();
        }
    }
}
