package calico.confd.e2e;

import static calico.confd.Fixtures.node;
import static org.assertj.core.api.Assertions.assertThat;

import calico.confd.Await;
import calico.confd.app.ConfdApplication;
import calico.confd.app.ConfdService;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.etcd.EtcdConfig;
import calico.libcalico.datastore.etcd.EtcdDatastore;
import calico.libcalico.health.HealthAggregator;
import calico.libcalico.testing.EtcdAdmin;
import calico.libcalico.testing.EtcdServerExtension;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

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
        try (Datastore etcd = new EtcdDatastore(EtcdConfig.of(ETCD.endpoint()));
             Datastore typhaStore = new EtcdDatastore(EtcdConfig.of(ETCD.endpoint()))) {
            etcd.create(node("node-1", "10.99.0.1/24"));
            etcd.create(node("node-2", "10.99.0.2/24"));
            TyphaServer typha = new TyphaServer(typhaStore, ServerSettings.defaults(0), null, new SimpleMeterRegistry(),
                    new HealthAggregator(Clock.systemUTC()), "confd-discovery");
            typha.start();
            Path config = tmp.resolve("bird.cfg");
            try (typha; ConfigurableApplicationContext ctx = new SpringApplicationBuilder(ConfdApplication.class)
                    .initializers(c -> c.getBeanFactory().registerSingleton("kubernetesClient", client))
                    .run("--confd.nodename=node-1", "--confd.datastore-type=etcdv3",
                            "--confd.etcd-endpoints=http://127.0.0.1:9", "--FELIX_TYPHAK8SSERVICENAME=calico-typha",
                            "--FELIX_TYPHAK8SNAMESPACE=calico-system",
                            "--confd.bird-socket=" + tmp.resolve("no-bird.ctl"), "--confd.bird-config=" + config,
                            "--confd.resync-interval=1", "--confd.peer-poll-interval=1", "--server.port=0",
                            "--server.address=127.0.0.1", "--calico.health.port=0", "--calico.health.host=127.0.0.1")) {
                HealthAggregator health = ctx.getBean(HealthAggregator.class);
                Await.until("health says confd is looking for typha", Duration.ofSeconds(30),
                        () -> health.status("confd").orElseThrow().detail().contains("has no ready endpoint"));
                assertThat(typha.connectionCount()).isZero();

                client.discovery().v1().endpointSlices().inNamespace("calico-system").resource(new EndpointSliceBuilder()
                        .withNewMetadata().withNamespace("calico-system").withName("calico-typha-x")
                        .addToLabels("kubernetes.io/service-name", "calico-typha").endMetadata()
                        .withAddressType("IPv4").addNewPort().withName("calico-typha").withPort(typha.port()).endPort()
                        .addNewEndpoint().withAddresses("127.0.0.1").withNodeName("node-2").withNewConditions()
                        .withReady(true).endConditions().endEndpoint().build()).create();

                Await.until("config rendered from the discovered typha", Duration.ofSeconds(60),
                        () -> Files.exists(config) && Files.readString(config).contains("protocol bgp Mesh_10_99_0_2"));
                assertThat(ctx.getBean(ConfdService.class).datastore()).as("no datastore opened").isNull();
                assertThat(typha.connectionCount()).isEqualTo(1);
            }
        }
    }
}
