package calico.libcalico.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The mock's own client sends a failed write again (here a 503 once; in confd's flake a POST
 * that outlived the 10 s timeout, which the mock had carried out: the retry got 409); the
 * load-tolerant client sends it once and says why it failed.
 */
@EnableKubernetesMockClient(crud = true)
class MockApiClientsTest {

    static KubernetesMockServer server;
    static KubernetesClient client;
    @RegisterExtension
    static final MockApiClients.PerClass API = MockApiClients.perClass(() -> client);

    private static final String PATH = "/api/v1/namespaces/ns1/configmaps";

    @Test
    void theMocksClientSendsAFailedWriteAgainTheLoadTolerantOneDoesNot() {
        server.expect().post().withPath(PATH).andReturn(503, "busy").once();
        int before = server.getRequestCount();
        client.configMaps().inNamespace("ns1").resource(map("retried")).create();
        assertThat(server.getRequestCount() - before).as("the mock's client: the POST sent twice").isEqualTo(2);
        assertThat(client.getConfiguration().getRequestTimeout()).as("and its timeout, ms").isEqualTo(10_000);

        try (KubernetesClient tolerant = MockApiClients.loadTolerant(client)) {
            server.expect().post().withPath(PATH).andReturn(503, "busy").once();
            int first = server.getRequestCount();
            assertThatThrownBy(() -> tolerant.configMaps().inNamespace("ns1").resource(map("once")).create())
                    .isInstanceOf(KubernetesClientException.class).hasMessageContaining("Service Unavailable");
            assertThat(server.getRequestCount() - first).as("the load-tolerant client: sent once").isEqualTo(1);
            assertThat(tolerant.configMaps().inNamespace("ns1").resource(map("once")).create().getMetadata().getName())
                    .isEqualTo("once");
            assertThat(tolerant.getConfiguration().getRequestTimeout())
                    .isEqualTo((int) MockApiClients.REQUEST_TIMEOUT.toMillis());
        }
    }

    private static ConfigMap map(String name) {
        return new ConfigMapBuilder().withNewMetadata().withName(name).withNamespace("ns1").endMetadata().build();
    }

    @Test
    void perClassGivesTheClassALoadTolerantClientOfItsMock() {
        assertThat(API.get()).isNotSameAs(client);
        assertThat(API.get().getConfiguration().getRequestTimeout()).isEqualTo((int) MockApiClients.REQUEST_TIMEOUT.toMillis());
        assertThat(API.get().getConfiguration().getMasterUrl()).isEqualTo(client.getConfiguration().getMasterUrl());
        API.get().configMaps().inNamespace("ns1").resource(map("per-class")).create();
        assertThat(client.configMaps().inNamespace("ns1").withName("per-class").get()).isNotNull();
    }
}
