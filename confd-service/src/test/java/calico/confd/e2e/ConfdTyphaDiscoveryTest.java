package calico.confd.e2e;

import static calico.confd.Fixtures.node;
import static org.assertj.core.api.Assertions.assertThat;

import calico.confd.Await;
import calico.confd.app.ConfdApplication;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.etcd.EtcdConfig;
import calico.libcalico.datastore.etcd.EtcdDatastore;
import calico.libcalico.health.HealthAggregator;
import calico.libcalico.testing.EtcdAdmin;
import calico.libcalico.testing.EtcdServerExtension;
import calico.libcalico.testing.MockApiClients;
import calico.typha.server.ServerSettings;
import calico.typha.server.TyphaServer;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Calico's manifests give calico-node only {@code FELIX_TYPHAK8SSERVICENAME}: confd then finds
 * typha in that service's EndpointSlices (fabric8 mock API server, CRUD mode) as felix does,
 * keeps looking (and says so in health) while there is none, and renders from typha's
 * {@code bgp} syncer once a ready endpoint appears. Real etcd behind a real in-process typha;
 * confd's own etcd address leads nowhere.
 */
@EnableKubernetesMockClient(crud = true)
class ConfdTyphaDiscoveryTest {

    static KubernetesClient client;

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    @TempDir
    Path tmp;

    @Test
    void findsTyphaThroughItsServiceAndRendersFromIt() throws Exception {
        EtcdAdmin.wipe(ETCD.endpoint());
        try (KubernetesClient api = MockApiClients.loadTolerant(client);
             Datastore etcd = new EtcdDatastore(EtcdConfig.of(ETCD.endpoint()));
             Datastore typhaStore = new EtcdDatastore(EtcdConfig.of(ETCD.endpoint()))) {
            etcd.create(node("node-1", "10.99.0.1/24"));
            etcd.create(node("node-2", "10.99.0.2/24"));
            TyphaServer typha = new TyphaServer(typhaStore, ServerSettings.defaults(0), null, new SimpleMeterRegistry(),
                    new HealthAggregator(Clock.systemUTC()), "confd-discovery");
            typha.start();
            Path config = tmp.resolve("bird.cfg");
            try (typha; ConfdApplication app = ConfdApplication.start(Map.ofEntries(Map.entry("NODENAME", "node-1"),
                    Map.entry("DATASTORE_TYPE", "etcdv3"), Map.entry("ETCD_ENDPOINTS", "http://127.0.0.1:9"),
                    Map.entry("FELIX_TYPHAK8SSERVICENAME", "calico-typha"), Map.entry("FELIX_TYPHAK8SNAMESPACE", "calico-system"),
                    Map.entry("CALICO_BIRD_SOCKET", tmp.resolve("no-bird.ctl").toString()),
                    Map.entry("CALICO_BIRD_CONFIG", config.toString()), Map.entry("CALICO_CONFD_RESYNC_INTERVAL", "1"),
                    Map.entry("CALICO_CONFD_PEER_POLL_INTERVAL", "1"), Map.entry("CONFD_ADMINPORT", "0"),
                    Map.entry("CONFD_ADMINHOST", "127.0.0.1"), Map.entry("CONFD_HEALTHPORT", "0"),
                    Map.entry("CONFD_HEALTHHOST", "127.0.0.1")), api)) {
                HealthAggregator health = app.health();
                Await.until("health says confd is looking for typha", Duration.ofSeconds(30),
                        () -> health.status("confd").orElseThrow().detail().contains("has no ready endpoint"));
                assertThat(typha.connectionCount()).isZero();

                api.discovery().v1().endpointSlices().inNamespace("calico-system").resource(new EndpointSliceBuilder()
                        .withNewMetadata().withNamespace("calico-system").withName("calico-typha-x")
                        .addToLabels("kubernetes.io/service-name", "calico-typha").endMetadata()
                        .withAddressType("IPv4").addNewPort().withName("calico-typha").withPort(typha.port()).endPort()
                        .addNewEndpoint().withAddresses("127.0.0.1").withNodeName("node-2").withNewConditions()
                        .withReady(true).endConditions().endEndpoint().build()).create();

                Await.until("config rendered from the discovered typha", Duration.ofSeconds(60),
                        () -> Files.exists(config) && Files.readString(config).contains("protocol bgp Mesh_10_99_0_2"));
                assertThat(app.service().datastore()).as("no datastore opened").isNull();
                assertThat(typha.connectionCount()).isEqualTo(1);
            }
        }
    }
}
