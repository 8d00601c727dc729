package calico.confd.services;

import static calico.confd.Fixtures.bgpConfig;
import static calico.confd.Fixtures.node;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.BGPConfigurationSpec;
import calico.confd.Await;
import calico.libcalico.bird.BirdControl;
import calico.confd.bird.BirdValidator;
import calico.confd.bird.ConfigFile;
import calico.confd.daemon.ConfdDaemon;
import calico.confd.model.BgpStore;
import calico.confd.render.BirdConfigBuilder;
import calico.confd.render.SecretSource;
import calico.libcalico.datastore.memory.MemoryDatastore;
import calico.libcalico.syncer.WatcherSyncer;
import calico.libcalico.testing.MockApiClients;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Services watch against a Kubernetes API (fabric8 mock server, CRUD mode) feeding a real
 * daemon that installs BIRD's configuration ({@code bird -p} checked): an
 * {@code externalTrafficPolicy: Local} service's load-balancer IP is advertised while this node
 * has a ready endpoint and withdrawn when the endpoint moves to another node; a Cluster-policy
 * service's LB IP is advertised on its own because aggregation is Disabled, and withdrawn when
 * the service is deleted.
 */
@EnableKubernetesMockClient(crud = true)
class KubernetesServicesTest {

    static KubernetesClient client;

    @TempDir
    Path tmp;

    @Test
    void localPolicyFollowsTheEndpointAndDisabledAggregationAdvertisesEachIp() throws Exception {
        Path config = tmp.resolve("bird.cfg");
        try (KubernetesClient api = MockApiClients.loadTolerant(client);
             MemoryDatastore ds = new MemoryDatastore();
             ConfdDaemon daemon = new ConfdDaemon("node-1", "", new BirdConfigBuilder(SecretSource.none()),
                     new ConfigFile(config, new BirdValidator("/usr/sbin/bird")),
                     new BirdControl(tmp.resolve("no-bird.ctl"), Duration.ofSeconds(1)), Duration.ofMillis(500));
             WatcherSyncer syncer = new WatcherSyncer(ds, BgpStore.KINDS, daemon);
             KubernetesServices services = new KubernetesServices(api, "node-1", daemon::onServices)) {
            ds.create(node("node-1", "10.0.0.1/24"));
            ds.create(bgpConfig("default", new BGPConfigurationSpec(null, null, null,
                    List.of(new BGPConfigurationSpec.CidrBlock("198.51.100.0/24")), null, null, null, null, null, null,
                    null, null, null, null, null, "Disabled")));
            api.services().inNamespace("ns1").resource(lb("web", "Local", "198.51.100.10")).create();
            api.services().inNamespace("ns1").resource(lb("api", "Cluster", "198.51.100.20")).create();
            api.discovery().v1().endpointSlices().inNamespace("ns1").resource(slice("web", "node-1")).create();
            syncer.start();
            services.start();

            await("both LB IPs advertised", () -> Files.exists(config) && Files.readString(config)
                    .contains("if ( net = 198.51.100.10/32 ) then { accept; }  # Service ns1/web")
                    && Files.readString(config).contains("if ( net = 198.51.100.20/32 ) then { accept; }"));
            assertThat(Files.readString(config)).as("aggregation Disabled: no range")
                    .doesNotContain("198.51.100.0/24");

            // web's endpoint moves to node-2: node-1 stops advertising web, keeps api.
            api.discovery().v1().endpointSlices().inNamespace("ns1").resource(slice("web", "node-2")).update();
            await("web withdrawn", () -> !Files.readString(config).contains("198.51.100.10"));
            assertThat(Files.readString(config)).contains("route 198.51.100.20/32 blackhole;");

            // api deleted: its route goes too.
            api.services().inNamespace("ns1").withName("api").delete();
            await("api withdrawn", () -> !Files.readString(config).contains("198.51.100.20"));
        }
    }

    private static Service lb(String name, String policy, String ip) {
        return new ServiceBuilder().withNewMetadata().withName(name).withNamespace("ns1").endMetadata()
                .withNewSpec().withType("LoadBalancer").withExternalTrafficPolicy(policy).withClusterIP("10.96.0.50")
                .addNewPort().withPort(80).endPort().endSpec()
                .withNewStatus().withNewLoadBalancer().addNewIngress().withIp(ip).endIngress().endLoadBalancer()
                .endStatus().build();
    }

    private static EndpointSlice slice(String service, String nodeName) {
        return new EndpointSliceBuilder().withNewMetadata().withName(service + "-slice").withNamespace("ns1")
                .addToLabels(KubernetesServices.SERVICE_NAME_LABEL, service).endMetadata().withAddressType("IPv4")
                .addNewEndpoint().withAddresses("10.48.1.5").withNodeName(nodeName).withNewConditions()
                .withReady(true).endConditions().endEndpoint().build();
    }

    private static void await(String what, Callable<Boolean> condition) throws Exception {
        Await.until(what, Duration.ofSeconds(60), condition);
    }
}
