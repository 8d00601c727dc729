package calico.typha.app;

import static calico.typha.app.KubernetesRebalanceTarget.ReplicaSource.CONFIGURATION;
import static calico.typha.app.KubernetesRebalanceTarget.ReplicaSource.ENDPOINTS;
import static calico.typha.app.KubernetesRebalanceTarget.ReplicaSource.ENDPOINT_SLICES;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.libcalico.syncer.SyncerCallbacks;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.MockApiClients;
import calico.libcalico.typha.SyncerType;
import calico.libcalico.typha.TyphaClient;
import calico.libcalico.typha.TyphaClientOptions;
import io.fabric8.kubernetes.api.model.EndpointAddressBuilder;
import io.fabric8.kubernetes.api.model.Endpoints;
import io.fabric8.kubernetes.api.model.EndpointsBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * TYPHA_CONNECTIONREBALANCINGMODE=kubernetes against the fabric8 mock API server (CRUD mode):
 * the replica count follows the ready endpoints of TYPHA_K8SSERVICENAME's port TYPHA_K8SPORTNAME
 * in TYPHA_K8SNAMESPACE, from its EndpointSlices or else its Endpoints (through the Spring Cloud
 * Kubernetes discovery client), the client count
 * is the node count, and without endpoints typha falls back to TYPHA_REPLICAS. The live target
 * reaches the server: over it, clients are moved.
 */
@EnableKubernetesMockClient(crud = true)
class KubernetesRebalanceTest {

    static KubernetesClient client;
    /** The test's writes: sent once, however slow the mock is under load (see {@link MockApiClients}). */
    @RegisterExtension
    static final MockApiClients.PerClass API = MockApiClients.perClass(() -> client);

    private static ConfigurableApplicationContext typha(String... extra) {
        List<String> args = new ArrayList<>(List.of("--typha.datastore-type=memory", "--typha.server-port=0",
                "--server.port=0", "--calico.health.port=0", "--calico.health.host=127.0.0.1",
                "--TYPHA_CONNECTIONREBALANCINGMODE=kubernetes", "--TYPHA_K8SNAMESPACE=calico-system",
                "--TYPHA_K8SSERVICEPOLLINTERVALSECS=1", "--TYPHA_MAXCONNECTIONSLOWERLIMIT=1", "--TYPHA_REPLICAS=5"));
        args.addAll(List.of(extra));
        return new SpringApplicationBuilder(TyphaApplication.class)
                .initializers(ctx -> ctx.getBeanFactory().registerSingleton("kubernetesClient", client))
                .run(args.toArray(String[]::new));
    }

    private static void endpoints(String... ips) {
        Endpoints e = new EndpointsBuilder().withNewMetadata().withName("calico-typha").withNamespace("calico-system")
                .endMetadata().addNewSubset()
                .withAddresses(java.util.Arrays.stream(ips).map(ip -> new EndpointAddressBuilder().withIp(ip).build())
                        .toList())
                // A not-ready typha is not counted.
                .withNotReadyAddresses(new EndpointAddressBuilder().withIp("10.0.9.9").build())
                .addNewPort().withName("calico-typha").withPort(5473).withProtocol("TCP").endPort()
                .addNewPort().withName("metrics").withPort(9093).withProtocol("TCP").endPort()
                .endSubset().build();
        API.get().endpoints().inNamespace("calico-system").resource(e).createOr(x -> x.update());
    }

    /** An EndpointSlice of the typha service: {@code ready} per address (null: condition unset, which means ready). */
    private static void slice(String name, String namespace, String portName, String ip, Boolean... ready) {
        var b = new io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder().withNewMetadata().withName(name)
                .withNamespace(namespace).addToLabels(calico.libcalico.typha.TyphaDiscovery.SERVICE_NAME_LABEL, "calico-typha")
                .endMetadata().withAddressType("IPv4")
                .addNewPort().withName(portName).withPort(5473).withProtocol("TCP").endPort();
        for (int i = 0; i < ready.length; i++) {
            var e = new io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder().withAddresses(ip + i);
            if (ready[i] != null) {
                e.withNewConditions().withReady(ready[i]).endConditions();
            }
            b.addToEndpoints(e.build());
        }
        API.get().discovery().v1().endpointSlices().inNamespace(namespace).resource(b.build()).createOr(x -> x.update());
    }

    @Test
    void replicasComeFromEndpointSlicesFirstThenEndpoints() throws Exception {
        service("calico-system");
        // Endpoints list 3 typhas, but the slices are what current Kubernetes maintains: 2 slices,
        // 4 ready endpoints (one with its ready condition unset), one not ready.
        endpoints("10.0.0.1", "10.0.0.2", "10.0.0.3");
        slice("calico-typha-a", "calico-system", "calico-typha", "10.1.0.", true, null, false);
        slice("calico-typha-b", "calico-system", "calico-typha", "10.2.0.", true, true);
        // Not ours: another namespace; our namespace but another port name.
        slice("calico-typha-x", "kube-system", "calico-typha", "10.3.0.", true, true, true, true, true, true);
        slice("calico-typha-y", "calico-system", "metrics-only", "10.4.0.", true, true, true, true, true, true);
        try (ConfigurableApplicationContext ctx = typha("--TYPHA_EXPECTEDCLIENTS=10")) {
            KubernetesRebalanceTarget target = ctx.getBean(KubernetesRebalanceTarget.class);
            // 2 × (1 + 10 × 120 / (4 − 1) / 100) = 2 × 5 = 10
            await("4 replicas from the slices", () -> target.counts()
                    .equals(new KubernetesRebalanceTarget.Counts(4, ENDPOINT_SLICES, 10, 10)), target::counts);

            API.get().discovery().v1().endpointSlices().inNamespace("calico-system").withName("calico-typha-a").delete();
            API.get().discovery().v1().endpointSlices().inNamespace("calico-system").withName("calico-typha-b").delete();
            await("no slice of ours: the Endpoints' 3", () -> target.counts()
                    .equals(new KubernetesRebalanceTarget.Counts(3, ENDPOINTS, 10, 14)), target::counts);
        } finally {
            API.get().endpoints().inNamespace("calico-system").withName("calico-typha").delete();
            API.get().discovery().v1().endpointSlices().inAnyNamespace().delete();
        }
    }

    private static void service(String namespace) {
        API.get().services().inNamespace(namespace).resource(new ServiceBuilder().withNewMetadata()
                .withName("calico-typha").withNamespace(namespace).endMetadata().withNewSpec()
                .addNewPort().withName("calico-typha").withPort(5473).endPort().endSpec().build())
                .createOr(x -> x.update());
    }

    private static void await(String what, BooleanSupplier c, java.util.function.Supplier<Object> detail) {
        try {
            Await.until(what, Duration.ofSeconds(30), c);
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; last: " + detail.get(), e);
        }
    }

    @Test
    void replicasFollowTheServiceEndpointsAndFallBackToConfiguration() throws Exception {
        service("calico-system");
        // A same-named service elsewhere is not ours.
        service("kube-system");
        IntStream.range(0, 10).forEach(i -> API.get().nodes().resource(new NodeBuilder().withNewMetadata()
                .withName("node-" + i).endMetadata().build()).create());
        endpoints("10.0.0.1", "10.0.0.2", "10.0.0.3");

        try (ConfigurableApplicationContext ctx = typha()) {
            KubernetesRebalanceTarget target = ctx.getBean(KubernetesRebalanceTarget.class);
            // Service calico-typha by Calico's default name; target 2 syncer types × (1 + 10 × 1.2 / (3 − 1)).
            await("3 replicas from the endpoints, 10 nodes", () -> target.counts()
                    .equals(new KubernetesRebalanceTarget.Counts(3, ENDPOINTS, 10, 14)), target::counts);
            assertThat(target.getAsInt()).isEqualTo(14);

            endpoints("10.0.0.1", "10.0.0.2");
            await("scaled down to 2", () -> target.counts()
                    .equals(new KubernetesRebalanceTarget.Counts(2, ENDPOINTS, 10, 26)), target::counts);

            API.get().endpoints().inNamespace("calico-system").withName("calico-typha").delete();
            await("no endpoints: TYPHA_REPLICAS", () -> target.counts()
                    .equals(new KubernetesRebalanceTarget.Counts(5, CONFIGURATION, 10, 8)), target::counts);
        }
    }

    @Test
    void theLiveTargetMovesClients() throws Exception {
        service("calico-system");
        endpoints("10.0.0.1", "10.0.0.2", "10.0.0.3");
        // 1 expected client over 3 replicas: 2 syncer types × 1 = a target of 2; three clients arrive.
        try (ConfigurableApplicationContext ctx = typha("--TYPHA_EXPECTEDCLIENTS=1")) {
            KubernetesRebalanceTarget target = ctx.getBean(KubernetesRebalanceTarget.class);
            await("target 2 from 3 endpoints", () -> target.counts()
                    .equals(new KubernetesRebalanceTarget.Counts(3, ENDPOINTS, 1, 2)), target::counts);
            int port = ctx.getBean(TyphaDaemon.class).port();
            List<TyphaClient> clients = new ArrayList<>();
            try {
                for (int i = 0; i < 3; i++) {
                    TyphaClient c = new TyphaClient(TyphaClientOptions.plaintext(List.of("127.0.0.1:" + port),
                            "node-" + i, SyncerType.FELIX).withBackoff(Duration.ofMillis(50), Duration.ofMillis(200)),
                            new SyncerCallbacks() {
                                @Override
                                public void onStatusUpdated(SyncerStatus status) {
                                }

                                @Override
                                public void onUpdates(List<Update> updates) {
                                }
                            });
                    clients.add(c);
                    c.start();
                }
                await("a client asked to reconnect elsewhere", () -> clients.stream().anyMatch(c -> c.connections() > 1),
                        () -> clients.stream().map(TyphaClient::connections).toList());
            } finally {
                clients.forEach(TyphaClient::close);
            }
        }
    }

    @Test
    void calicosTargetFormula() {
        TyphaKubernetesProperties defaults = new TyphaKubernetesProperties(null, null, null, Duration.ofSeconds(30), 400);
        assertThat(defaults.k8sServiceName()).isEqualTo("calico-typha");
        assertThat(defaults.target(1000, 1, 2, 10000)).as("lone typha: nothing to balance").isZero();
        assertThat(defaults.target(0, 3, 2, 10000)).as("no client count: no rebalancing").isZero();
        assertThat(defaults.target(100, 3, 2, 10000)).as("lower limit").isEqualTo(400);
        assertThat(defaults.target(1000, 3, 2, 10000)).isEqualTo(2 * (1 + 600));
        assertThat(defaults.target(100000, 3, 2, 10000)).as("upper limit").isEqualTo(10000);
        assertThatThrownBy(() -> new TyphaKubernetesProperties("x", null, null, Duration.ofSeconds(30), 0))
                .hasMessageContaining("TYPHA_MAXCONNECTIONSLOWERLIMIT");
    }

    @Test
    void kubernetesModeWithABlankServiceNameFailsNamingTheVariable() {
        assertThatThrownBy(() -> new SpringApplicationBuilder(TyphaApplication.class)
                .initializers(ctx -> ctx.getBeanFactory().registerSingleton("kubernetesClient", client))
                .run("--typha.datastore-type=memory", "--typha.server-port=0", "--server.port=0",
                        "--calico.health.port=0", "--TYPHA_CONNECTIONREBALANCINGMODE=kubernetes",
                        "--TYPHA_K8SSERVICENAME="))
                .hasStackTraceContaining("TYPHA_K8SSERVICENAME");
    }

    @Test
    void noKubernetesBeansOutsideKubernetesMode() {
        try (ConfigurableApplicationContext ctx = new SpringApplicationBuilder(TyphaApplication.class).run(
                "--typha.datastore-type=memory", "--typha.server-port=0", "--server.port=0", "--calico.health.port=0",
                "--TYPHA_CONNECTIONREBALANCINGMODE=config", "--TYPHA_K8SSERVICENAME=calico-typha")) {
            assertThat(ctx.getBeansOfType(KubernetesRebalanceTarget.class)).isEmpty();
            // Spring Cloud Commons' own (composite, simple-from-properties) clients may exist; no Kubernetes one.
            assertThat(ctx.getBeansOfType(org.springframework.cloud.client.discovery.DiscoveryClient.class).values())
                    .noneMatch(d -> d.getClass().getName().contains("kubernetes"));
            assertThat(ctx.getBeansOfType(KubernetesClient.class)).isEmpty();
        }
    }
}
