package calico.controllers.app;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.ControllerMode;
import calico.api.model.HostEndpoint;
import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.KubeControllersConfiguration;
import calico.api.model.KubeControllersConfigurationSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import calico.libcalico.datastore.kubernetes.KubernetesDatastore;
import calico.libcalico.ipam.AssignResult;
import calico.libcalico.ipam.AutoAssignRequest;
import calico.libcalico.ipam.IntendedUse;
import calico.libcalico.ipam.IpamClient;
import calico.libcalico.ipam.IpamOptions;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.KubeControlPlaneExtension;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The whole application on the kubernetes datastore of a real control plane (kube-apiserver,
 * controller manager, Calico's CRDs): KubeControllersConfiguration default created and honoured
 * live, automatic host endpoints (default and templated), IPAM garbage collection (never a live pod's address), the clean-up
 * after a deleted Node, Calico's metric names, and one active replica by a Lease.
 */
class KubernetesControllersTest {

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension();

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static KubernetesDatastore store;
    private static IpamClient ipam;

    @BeforeAll
    static void pool() {
        store = KUBE.datastore();
        ipam = new IpamClient(store, IpamOptions.defaults());
        store.create(new IPPool(ObjectMeta.named("kc-pool"), new IPPoolSpec("10.77.0.0/24", null, null, null, null, null,
                29, null, null, List.of(IPPoolSpec.AllowedUse.Workload, IPPoolSpec.AllowedUse.Tunnel), null)));
    }

    @AfterAll
    static void close() {
        store.close();
    }

    private static ConfigurableApplicationContext start(String identity, String... extra) {
        return TestApps.kubernetes(KUBE.kubeconfig(), identity, extra);
    }

    private static KubeControllersConfiguration kcc() {
        return (KubeControllersConfiguration) store.get(new ResourceKey(ResourceKind.KUBE_CONTROLLERS_CONFIGURATION, null,
                "default")).orElse(null);
    }

    private static void node(String name, String internalIp, Map<String, String> labels) {
        KUBE.client().nodes().resource(new NodeBuilder().withNewMetadata().withName(name).withLabels(labels).endMetadata()
                .build()).create();
        onceWritten(name + "'s address written", () -> KUBE.client().nodes().withName(name).editStatus(n ->
                new NodeBuilder(n).editOrNewStatus().addNewAddress().withType("InternalIP").withAddress(internalIp)
                        .endAddress().endStatus().build()));
    }

    /** The controller manager writes Nodes too (a new one's taint): retries an edit that lost that race. */
    private static void onceWritten(String what, Runnable edit) {
        Await.until(what, WAIT, () -> {
            try {
                edit.run();
                return true;
            } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
                if (e.getCode() == 409) {
                    return false;
                }
                throw e;
            }
        });
    }

    /** Sets {@code spec.controllers.node.hostEndpoint} of KubeControllersConfiguration default. */
    private static void hostEndpoints(KubeControllersConfigurationSpec.AutoHostEndpoint h) {
        KubeControllersConfiguration k = kcc();
        KubeControllersConfigurationSpec s = k.spec();
        KubeControllersConfigurationSpec.NodeController n = s.controllers().node();
        KubeControllersConfigurationSpec.Controllers c = s.controllers();
        store.update(new KubeControllersConfiguration(k.metadata(), new KubeControllersConfigurationSpec(
                s.logSeverityScreen(), s.healthChecks(), s.etcdV3CompactionPeriod(), s.prometheusMetricsPort(),
                new KubeControllersConfigurationSpec.Controllers(new KubeControllersConfigurationSpec.NodeController(
                        n.reconcilerPeriod(), n.syncLabels(), h, n.leakGracePeriod()), c.policy(), c.workloadEndpoint(),
                        c.serviceAccount(), c.namespace(), c.loadBalancer(), c.policyMigration()), s.debugProfilePort()),
                k.status()));
    }

    private static void label(String node, String zone) {
        onceWritten(node + " labelled", () -> KUBE.client().nodes().withName(node).edit(x -> new NodeBuilder(x)
                .editMetadata().addToLabels("zone", zone).endMetadata().build()));
    }

    /** Replaces the node's addresses by one InternalIP. */
    private static void address(String node, String internalIp) {
        onceWritten(node + "'s address replaced", () -> KUBE.client().nodes().withName(node).editStatus(n ->
                new NodeBuilder(n).editOrNewStatus().withAddresses(new io.fabric8.kubernetes.api.model.NodeAddressBuilder()
                        .withType("InternalIP").withAddress(internalIp).build()).endStatus().build()));
    }

    private static Optional<HostEndpoint> hep(String node) {
        return store.get(new ResourceKey(ResourceKind.HOST_ENDPOINT, null, node + "-auto-hep")).map(HostEndpoint.class::cast);
    }

    private static IpAddress assign(String handle, String node, Map<String, String> attrs) {
        AssignResult r = ipam.autoAssign(new AutoAssignRequest(handle, node, 1, 0, List.of(), List.of(), attrs,
                attrs.containsKey("type") ? IntendedUse.TUNNEL : IntendedUse.WORKLOAD));
        return r.ipv4().get(0).address();
    }

    @Test
    void controllersOnTheKubernetesDatastore() throws Exception {
        node("kc-n1", "192.0.2.11", Map.of("zone", "a"));
        node("kc-n2", "192.0.2.12", Map.of("zone", "b"));
        try (ConfigurableApplicationContext a = start("replica-a")) {
            // 1. KubeControllersConfiguration default created with Calico's defaults and its status written.
            KubeControllersConfiguration created = Await.value("KubeControllersConfiguration default with status", WAIT,
                    () -> Optional.ofNullable(kcc()).filter(k -> k.status() != null));
            assertThat(created.spec().controllers().node().leakGracePeriod()).isEqualTo("15m0s");
            assertThat(created.status().runningConfig().controllers().node().syncLabels()).isEqualTo(ControllerMode.Disabled);
            assertThat(created.status().environmentVars()).containsEntry("DATASTORE_TYPE", "kubernetes");
            assertThat(hep("kc-n1")).as("autoCreate is off by default").isEmpty();

            // 2. Honoured live: host endpoints on, a short grace period, metrics and debug profiles on ports of ours.
            int metricsPort = TestApps.freePort();
            int debugPort = TestApps.freePort();
            KubeControllersConfigurationSpec s = created.spec();
            KubeControllersConfigurationSpec.NodeController n = s.controllers().node();
            store.update(new KubeControllersConfiguration(created.metadata(), new KubeControllersConfigurationSpec(
                    "Debug", s.healthChecks(), s.etcdV3CompactionPeriod(), metricsPort,
                    new KubeControllersConfigurationSpec.Controllers(new KubeControllersConfigurationSpec.NodeController(
                            n.reconcilerPeriod(), n.syncLabels(), new KubeControllersConfigurationSpec.AutoHostEndpoint(
                            ControllerMode.Enabled, null, null), "3s"), null, null, null, null, null, null), debugPort),
                    created.status()));
            Await.until("status says the new grace period", WAIT, () -> "3s".equals(
                    kcc().status().runningConfig().controllers().node().leakGracePeriod()));
            assertThat(kcc().status().runningConfig().controllers().policy()).as("policy controller switched off").isNull();
            Await.until("logSeverityScreen Debug applied to the calico loggers", WAIT, () ->
                    org.springframework.boot.logging.LoggingSystem.get(getClass().getClassLoader())
                            .getLoggerConfiguration("calico").getEffectiveLevel() == org.springframework.boot.logging.LogLevel.DEBUG);

            // 3. Automatic host endpoints: the node's address and labels, kept current.
            HostEndpoint h1 = Await.value("kc-n1-auto-hep", WAIT, () -> hep("kc-n1"));
            assertThat(h1.spec().interfaceName()).isEqualTo("*");
            assertThat(h1.spec().expectedIPs()).containsExactly("192.0.2.11");
            assertThat(h1.spec().profiles()).containsExactly("projectcalico-default-allow");
            assertThat(h1.metadata().labels()).containsEntry("zone", "a")
                    .containsEntry("projectcalico.org/created-by", "calico-kube-controllers");
            label("kc-n1", "c");
            Await.until("host endpoint follows the node's label", WAIT,
                    () -> hep("kc-n1").map(h -> "c".equals(h.metadata().labels().get("zone"))).orElse(false));

            // 3b. Templates, the default host endpoint switched off: a host endpoint per selected node with its
            // addresses inside the template's CIDRs, following the node's labels and addresses.
            hostEndpoints(new KubeControllersConfigurationSpec.AutoHostEndpoint(ControllerMode.Enabled,
                    ControllerMode.Disabled, List.of(new KubeControllersConfigurationSpec.Template("edge",
                    List.of("192.0.2.0/28"), null, Map.of("tier", "edge", "zone", "template"), "zone == 'c'"))));
            HostEndpoint t1 = Await.value("kc-n1-edge-auto-hep", WAIT, () -> hep("kc-n1-edge"));
            assertThat(t1.spec().expectedIPs()).containsExactly("192.0.2.11");
            assertThat(t1.spec().interfaceName()).isNullOrEmpty();
            assertThat(t1.spec().node()).isEqualTo("kc-n1");
            assertThat(t1.spec().profiles()).containsExactly("projectcalico-default-allow");
            assertThat(t1.metadata().labels()).containsEntry("tier", "edge").containsEntry("zone", "template")
                    .containsEntry("projectcalico.org/created-by", "calico-kube-controllers");
            Await.until("createDefaultHostEndpoint Disabled: kc-n1-auto-hep deleted", WAIT, () -> hep("kc-n1").isEmpty());
            assertThat(hep("kc-n2-edge")).as("kc-n2 is not selected").isEmpty();
            label("kc-n2", "c");
            Await.until("kc-n2 selected once labelled", WAIT, () -> hep("kc-n2-edge")
                    .map(h -> h.spec().expectedIPs().equals(List.of("192.0.2.12"))).orElse(false));
            label("kc-n1", "a");
            Await.until("kc-n1's template host endpoint deleted once it is not selected", WAIT,
                    () -> hep("kc-n1-edge").isEmpty());
            address("kc-n2", "192.0.2.13");
            Await.until("the template host endpoint follows the node's address", WAIT, () -> hep("kc-n2-edge")
                    .map(h -> h.spec().expectedIPs().equals(List.of("192.0.2.13"))).orElse(false));
            address("kc-n2", "198.51.100.12");
            Await.until("no address inside the CIDRs: the template host endpoint deleted", WAIT,
                    () -> hep("kc-n2-edge").isEmpty());
            assertThat(hep("kc-n2")).isEmpty();
            hostEndpoints(new KubeControllersConfigurationSpec.AutoHostEndpoint(ControllerMode.Enabled, null, null));
            Await.until("default host endpoints back", WAIT, () -> hep("kc-n1").isPresent() && hep("kc-n2").isPresent());

            // 4. IPAM GC: a live pod's address stays, a gone pod's is released after the grace period.
            IpAddress live = assign("k8s-pod-network.kc-live", "kc-n1",
                    Map.of("node", "kc-n1", "namespace", "default", "pod", "kc-live"));
            KUBE.client().pods().inNamespace("default").resource(new PodBuilder().withNewMetadata().withName("kc-live")
                    .addToAnnotations("cni.projectcalico.org/podIPs", live + "/32").endMetadata().withNewSpec()
                    .withNodeName("kc-n1").addNewContainer().withName("c").withImage("pause").endContainer().endSpec()
                    .build()).create();
            Instant leakedAt = Instant.now();
            IpAddress leaked = assign("k8s-pod-network.kc-gone", "kc-n1",
                    Map.of("node", "kc-n1", "namespace", "default", "pod", "kc-gone"));
            Await.until("the gone pod's address released", WAIT,
                    () -> ipam.addressesByHandle("k8s-pod-network.kc-gone").isEmpty());
            assertThat(Duration.between(leakedAt, Instant.now())).as("not before the grace period")
                    .isGreaterThanOrEqualTo(Duration.ofSeconds(3));
            assertThat(ipam.addressesByHandle("k8s-pod-network.kc-live")).containsExactly(live);
            assertThat(leaked).isNotEqualTo(live);

            // 4b. GC runs read the pods from an informer's cache: several runs, at most one cluster-wide LIST of pods.
            ControllersDaemon daemon = a.getBean(ControllersDaemon.class);
            long listsBefore = TestApps.clusterLists(KUBE, "pods");
            java.util.Set<NodeControllers.Run> runs = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
            Await.until("four node-controller runs", WAIT, () -> {
                Optional.ofNullable(daemon.lastNodeRun()).ifPresent(runs::add);
                return runs.size() >= 4;
            });
            assertThat(TestApps.clusterLists(KUBE, "pods") - listsBefore).as("pod LISTs during %d runs", runs.size()).isLessThanOrEqualTo(1);

            // 5. Node deleted: its pods' and tunnel addresses, its block affinities and its host endpoint go.
            IpAddress tunnel = assign("vxlan-tunnel-addr-kc-n2", "kc-n2", Map.of("node", "kc-n2", "type", "vxlanTunnelAddress"));
            assign("k8s-pod-network.kc-n2-pod", "kc-n2", Map.of("node", "kc-n2", "namespace", "default", "pod", "kc-n2-pod"));
            Await.value("kc-n2-auto-hep", WAIT, () -> hep("kc-n2"));
            assertThat(tunnel).isNotNull();
            KUBE.client().nodes().withName("kc-n2").delete();
            Await.until("kc-n2's addresses, affinities and host endpoint gone", WAIT,
                    () -> ipam.addressesByHandle("vxlan-tunnel-addr-kc-n2").isEmpty()
                            && ipam.addressesByHandle("k8s-pod-network.kc-n2-pod").isEmpty()
                            && store.list(ResourceKind.BLOCK_AFFINITY).items().stream()
                            .noneMatch(r -> ((calico.api.model.BlockAffinity) r).spec().node().equals("kc-n2"))
                            && hep("kc-n2").isEmpty());
            assertThat(ipam.addressesByHandle("k8s-pod-network.kc-live")).containsExactly(live);
            assertThat(ipam.check().problems()).isEmpty();

            // 6. Calico's metric names on prometheusMetricsPort.
            String metrics = Await.value("metrics", WAIT, () -> scrape(metricsPort)
                    .filter(t -> t.contains("ipam_allocations_gc_reclamations{")));
            String labels = "{application=\"calico-kube-controllers\",ippool=\"kc-pool\",node=\"kc-n1\"}";
            assertThat(metrics).contains("ipam_allocations_in_use" + labels + " 1.0")
                    .contains("ipam_allocations_borrowed" + labels + " 0.0")
                    .contains("ipam_allocations_gc_candidates" + labels + " 0.0")
                    .contains("ipam_allocations_gc_reclamations" + labels + " 1.0")
                    .contains("ipam_allocations_gc_reclamations" + labels.replace("kc-n1", "kc-n2") + " 2.0")
                    .contains("ipam_blocks" + labels + " 1.0")
                    .contains("ipam_ippool_size{application=\"calico-kube-controllers\",ippool=\"kc-pool\"} 256.0");
            assertThat(metrics).contains("ipam_allocations_per_node{application=\"calico-kube-controllers\",node=\"kc-n1\"} 1.0")
                    .contains("# TYPE ipam_allocations_gc_reclamations counter");
            assertThat(ControllersCalicoMetrics.TABLE.problemsIn(metrics)).as("every Calico name, type and label").isEmpty();
            assertThat(java.nio.file.Files.readString(java.nio.file.Path.of("DESIGN.md")))
                    .as("DESIGN.md prints the table checked here").contains(ControllersCalicoMetrics.TABLE.markdown());

            // 7. The debug profile port: the controllers' threads, as Calico's pprof shows its goroutines.
            assertThat(kcc().status().runningConfig().debugProfilePort()).isEqualTo(debugPort);
            assertThat(get(debugPort, "/debug/pprof/goroutine").orElseThrow()).contains("\"loop-health\"");

            // 8. Probes on the health port.
            int health = Integer.parseInt(a.getEnvironment().getProperty("calico.health.port"));
            assertThat(get(health, "/readiness").orElseThrow()).contains("\"KubeControllers\"").contains("\"status\":\"UP\"")
                    .as("each loop reports under its own name").contains("KubeControllers/node")
                    .contains("KubeControllers/config");
            assertThat(get(health, "/liveness").orElseThrow()).contains("\"status\":\"UP\"");

            // 9. One active replica: b stands by while a leads, and takes over when a goes.
            try (ConfigurableApplicationContext b = start("replica-b")) {
                assertThat(holder()).isEqualTo("replica-a");
                a.close();
                Instant gone = Instant.now();
                Await.until("replica-b leads", Duration.ofSeconds(20), () -> "replica-b".equals(holder()));
                assertThat(Duration.between(gone, Instant.now())).isLessThan(Duration.ofSeconds(15));
                node("kc-n3", "192.0.2.13", Map.of());
                Await.value("replica-b runs the controllers: kc-n3-auto-hep", WAIT, () -> hep("kc-n3"));
            }
        } finally {
            KUBE.client().pods().inNamespace("default").withName("kc-live").withGracePeriod(0).delete();
        }
    }

    private static String holder() {
        Lease l = KUBE.client().leases().inNamespace("default").withName("calico-kube-controllers").get();
        return l == null || l.getSpec() == null ? null : l.getSpec().getHolderIdentity();
    }

    private static Optional<String> scrape(int port) {
        return get(port, "/metrics");
    }

    /** {@return the body of a 200 answer to GET {@code path}} on loopback {@code port}. */
    private static Optional<String> get(int port, String path) {
        try {
            HttpResponse<String> r = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build().send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
                    HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 ? Optional.of(r.body()) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }
}
