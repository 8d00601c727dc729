package calico.libcalico.syncer;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.GlobalNetworkPolicy;
import calico.api.model.GlobalNetworkSet;
import calico.api.model.GlobalNetworkSetSpec;
import calico.api.model.KubernetesEndpointSlice;
import calico.api.model.KubernetesService;
import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.kubernetes.DatastoreMetrics;
import calico.libcalico.datastore.kubernetes.KubernetesDatastore;
import calico.libcalico.datastore.kubernetes.TestCustomResources;
import calico.libcalico.datastore.kubernetes.TestServices;
import calico.libcalico.datastore.memory.MemoryDatastore;
import calico.libcalico.testing.Await;
import calico.libcalico.typha.SyncerType;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The unchanged {@link WatcherSyncer} over the kubernetes datastore: in sync with Calico
 * resources and Kubernetes-derived ones, following changes, healing an expired watch revision
 * (410) by listing again, and going on past objects it cannot read. Runs against the test API
 * server ({@link KubernetesSyncerTest}) and the real kube-apiserver
 * ({@link KubernetesSyncerRealServerTest}); each case uses namespaces of its own.
 */
abstract class KubernetesSyncerContract {

    private static final ResourceKind[] KINDS = {
        ResourceKind.GLOBAL_NETWORK_SET, ResourceKind.WORKLOAD_ENDPOINT, ResourceKind.PROFILE};
    private static final AtomicInteger CASES = new AtomicInteger();
    private static final String NODE = "node-1";

    protected final RecordingCallbacks cb = new RecordingCallbacks();
    protected KubernetesDatastore store;
    private WatcherSyncer syncer;
    private String suffix;

    /** {@return the client that writes Kubernetes objects into the API server the datastore reads} */
    protected abstract KubernetesClient kubernetes();

    /** {@return a new datastore over that API server} whose watches bookmark at least every few seconds. */
    protected abstract KubernetesDatastore newDatastore();

    /** {@return a datastore over the same API server that writes while {@link #store}'s streams are down} */
    protected KubernetesDatastore writer() {
        return store;
    }

    /**
     * Cuts the datastore's watch streams off, makes {@code changes}, discards the history they
     * made (a compaction), and lets the streams resume: each resume gets 410 Gone.
     */
    protected abstract void whileWatchesAreDownAndCompacted(Runnable changes);

    @BeforeEach
    void start() {
        suffix = "-" + CASES.incrementAndGet();
        store = newDatastore();
    }

    @AfterEach
    void stop() {
        if (syncer != null) {
            syncer.stop();
        }
        store.close();
    }

    @Test
    void reachesInSyncWithCalicoAndKubernetesDerivedResourcesAndFollowsChanges() throws Exception {
        String prod = inSyncWithAPodAndASet();

        assertThat(cb.view()).isEqualTo(RecordingCallbacks.snapshot(store, KINDS));
        assertThat(cb.view().keySet()).contains(
                ResourceKey.of(ResourceKind.GLOBAL_NETWORK_SET, "a"),
                endpoint(prod, "web-1"),
                ResourceKey.of(ResourceKind.PROFILE, "kns.default"),
                ResourceKey.of(ResourceKind.PROFILE, "kns." + prod));

        pod(prod, "web-2", "10.0.0.2");
        store.update(gns("a", "10.2.0.0/16"));
        String dev = namespace("dev");
        deleteNamespace(prod);
        cb.awaitConverged(store, KINDS);

        assertThat(cb.view()).containsKey(ResourceKey.of(ResourceKind.PROFILE, "kns." + dev))
                .doesNotContainKey(ResourceKey.of(ResourceKind.PROFILE, "kns." + prod))
                .doesNotContainKey(endpoint(prod, "web-1"));
        assertThat(((GlobalNetworkSet) cb.view().get(ResourceKey.of(ResourceKind.GLOBAL_NETWORK_SET, "a"))).spec().nets())
                .containsExactly("10.2.0.0/16");
        assertThat(cb.violations()).isEmpty();
    }

    @Test
    void anExpiredRevisionIsHealedByListingAgain() throws Exception {
        String prod = inSyncWithAPodAndASet();
        int before = cb.size();

        // Changes the watches never see, then their revision is compacted away: each stream's
        // resume gets 410 Gone, and the syncer must list again.
        String[] dev = new String[1];
        whileWatchesAreDownAndCompacted(() -> {
            writer().delete(ResourceKey.of(ResourceKind.GLOBAL_NETWORK_SET, "a"), null);
            writer().create(gns("b", "10.3.0.0/16"));
            pod(prod, "web-3", "10.0.0.3");
            kubernetes().pods().inNamespace(prod).withName("web-1").withGracePeriod(0).delete();
            dev[0] = namespace("dev");
        });

        cb.awaitConverged(store, KINDS);
        assertThat(cb.view().keySet()).contains(
                ResourceKey.of(ResourceKind.GLOBAL_NETWORK_SET, "b"),
                endpoint(prod, "web-3"),
                ResourceKey.of(ResourceKind.PROFILE, "kns." + prod),
                ResourceKey.of(ResourceKind.PROFILE, "kns." + dev[0]))
                .doesNotContain(ResourceKey.of(ResourceKind.GLOBAL_NETWORK_SET, "a"), endpoint(prod, "web-1"));
        assertThat(cb.violations()).isEmpty();
        assertThat(cb.size()).isGreaterThan(before);

        // And it keeps following after the relist.
        store.create(gns("c", "10.4.0.0/16"));
        cb.awaitConverged(store, KINDS);
        assertThat(cb.view()).containsKey(ResourceKey.of(ResourceKind.GLOBAL_NETWORK_SET, "c"));
    }

    /**
     * Felix's syncer carries Kubernetes Services and EndpointSlices on this datastore (and only
     * here: other backends present none), created, updated and deleted in the Kubernetes API.
     */
    @Test
    void felixsSyncerCarriesKubernetesServices() throws Exception {
        String shop = namespace("shop");
        kubernetes().services().inNamespace(shop).resource(service("api", "10.96.0.10")).create();
        Set<ResourceKind> kinds = SyncerType.FELIX.kindsOn(store);
        assertThat(kinds).contains(ResourceKind.KUBERNETES_SERVICE, ResourceKind.KUBERNETES_ENDPOINT_SLICE)
                // felix routes IPAM blocks to their nodes (routeSource CalicoIPAM); the rest of IPAM is not its business
                .contains(ResourceKind.IPAM_BLOCK)
                .doesNotContain(ResourceKind.BLOCK_AFFINITY, ResourceKind.IPAM_HANDLE, ResourceKind.IPAM_CONFIGURATION);
        try (MemoryDatastore memory = new MemoryDatastore()) {
            assertThat(SyncerType.FELIX.kindsOn(memory))
                    .doesNotContain(ResourceKind.KUBERNETES_SERVICE, ResourceKind.KUBERNETES_ENDPOINT_SLICE)
                    .hasSize(kinds.size() - 2);
        }
        startSyncer(kinds.toArray(ResourceKind[]::new));
        cb.awaitStatus(SyncerStatus.IN_SYNC);
        ResourceKey api = ResourceKey.of(ResourceKind.KUBERNETES_SERVICE, shop, "api");
        assertThat(((KubernetesService) cb.view().get(api)).spec().clusterIPs()).contains("10.96.0.10");

        kubernetes().services().inNamespace(shop).withName("api").edit(s -> new ServiceBuilder(s).editSpec()
                .withExternalIPs("192.0.2.99").endSpec().build());
        kubernetes().services().inNamespace(shop).resource(service("web", "10.96.0.11")).create();
        cb.awaitConverged(store, kinds.toArray(ResourceKind[]::new));
        assertThat(((KubernetesService) cb.view().get(api)).spec().externalIPs()).containsExactly("192.0.2.99");
        assertThat(cb.view()).containsKey(ResourceKey.of(ResourceKind.KUBERNETES_SERVICE, shop, "web"));

        // and the services' endpoints, for rules' services matches
        kubernetes().discovery().v1().endpointSlices().inNamespace(shop)
                .resource(TestServices.endpointSlice("api-1", "api", 8080, "10.70.0.2")).create();
        cb.awaitConverged(store, kinds.toArray(ResourceKind[]::new));
        ResourceKey slice = ResourceKey.of(ResourceKind.KUBERNETES_ENDPOINT_SLICE, shop, "api-1");
        assertThat(((KubernetesEndpointSlice) cb.view().get(slice)).spec().serviceName()).isEqualTo("api");

        kubernetes().services().inNamespace(shop).withName("api").delete();
        kubernetes().discovery().v1().endpointSlices().inNamespace(shop).withName("api-1").delete();
        cb.awaitConverged(store, kinds.toArray(ResourceKind[]::new));
        assertThat(cb.view()).doesNotContainKey(api).doesNotContainKey(slice);
        assertThat(cb.violations()).isEmpty();
    }

    /**
     * A GlobalNetworkPolicy written straight into its CRD with a selector Calico refuses (the
     * CRD's schema only says "a string"): one warning per object version naming it and the field,
     * counted in {@code calico_datastore_invalid_objects_total}, never delivered; the syncer
     * delivers everything else, and the policy once it is fixed. Broken again, it is deleted
     * from the syncer's view (as Calico's felix treats an invalid value as missing).
     */
    @Test
    void aCustomResourceWrittenAroundValidationIsLoggedOnceCountedAndSkipped() throws Exception {
        PrometheusMeterRegistry metrics = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        new DatastoreMetrics(store).bindTo(metrics);
        ListAppender<ILoggingEvent> log = captureInvalidObjectLog();
        try {
            writePolicy("bad", "has(", 1);
            store.create(gns("a", "10.1.0.0/16"));
            ResourceKind[] kinds = {ResourceKind.GLOBAL_NETWORK_POLICY, ResourceKind.GLOBAL_NETWORK_SET};
            startSyncer(kinds);
            cb.awaitStatus(SyncerStatus.IN_SYNC);

            ResourceKey bad = ResourceKey.of(ResourceKind.GLOBAL_NETWORK_POLICY, "default.bad");
            assertThat(cb.view()).doesNotContainKey(bad).containsKey(ResourceKey.of(ResourceKind.GLOBAL_NETWORK_SET, "a"));
            assertThat(store.list(ResourceKind.GLOBAL_NETWORK_POLICY).items()).isEmpty(); // seen again: not logged again
            assertThat(messages(log)).singleElement().asString()
                    .contains("crd.projectcalico.org/globalnetworkpolicies default.bad", "spec.selector");
            assertThat(metrics.scrape())
                    .contains("calico_datastore_invalid_objects_total{kind=\"GlobalNetworkPolicy\"} 1.0")
                    .contains("calico_datastore_invalid_objects_total{kind=\"GlobalNetworkSet\"} 0.0");

            // A new version, still invalid: one more line; the syncer goes on with the rest.
            writePolicy("bad", "has(x", 2);
            store.create(gns("b", "10.2.0.0/16"));
            cb.awaitConverged(store, kinds);
            assertThat(cb.view()).containsKey(ResourceKey.of(ResourceKind.GLOBAL_NETWORK_SET, "b")).doesNotContainKey(bad);
            awaitLines(log, 2);
            assertThat(messages(log).get(1)).contains("default.bad", "spec.selector");
            assertThat(store.invalidObjects(ResourceKind.GLOBAL_NETWORK_POLICY)).isEqualTo(2);

            writePolicy("bad", "has(x)", 3);
            cb.awaitConverged(store, kinds);
            assertThat(((GlobalNetworkPolicy) cb.view().get(bad)).spec().selector()).isEqualTo("has(x)");

            writePolicy("bad", "has(x", 4);
            cb.awaitConverged(store, kinds);
            assertThat(cb.view()).doesNotContainKey(bad);
            awaitLines(log, 3);
            assertThat(cb.violations()).isEmpty();
        } finally {
            ((Logger) LoggerFactory.getLogger(INVALID_OBJECTS_LOGGER)).detachAppender(log);
        }
    }

    /** A pod whose Calico IP annotation is not an address: skipped (logged once, counted), its neighbours delivered. */
    @Test
    void aPodCalicoCannotReadIsSkippedAndTheSyncerGoesOn() throws Exception {
        ListAppender<ILoggingEvent> log = captureInvalidObjectLog();
        try {
            String ns = namespace("pods");
            pod(ns, "good", "10.0.0.1");
            pod(ns, "bad", "10.0.0.300");
            startSyncer(KINDS);
            cb.awaitStatus(SyncerStatus.IN_SYNC);

            assertThat(cb.view()).containsKey(endpoint(ns, "good")).doesNotContainKey(endpoint(ns, "bad"));
            assertThat(messages(log)).singleElement().asString()
                    .contains("pods " + ns + "/bad", "metadata.annotations[cni.projectcalico.org/podIP]");
            assertThat(store.invalidObjects(ResourceKind.WORKLOAD_ENDPOINT)).isEqualTo(1);

            pod(ns, "after", "10.0.0.2");
            cb.awaitConverged(store, KINDS);
            assertThat(cb.view()).containsKey(endpoint(ns, "after"));
            assertThat(messages(log)).hasSize(1);
            assertThat(cb.violations()).isEmpty();
        } finally {
            ((Logger) LoggerFactory.getLogger(INVALID_OBJECTS_LOGGER)).detachAppender(log);
        }
    }

    // ------------------------------------------------------------------ fixtures

    private static final String INVALID_OBJECTS_LOGGER = "calico.libcalico.datastore.kubernetes.InvalidObjects";

    /** Pod {@code web-1} in a new namespace and set {@code a}, then the syncer in sync; {@return the namespace} */
    private String inSyncWithAPodAndASet() throws InterruptedException {
        String prod = namespace("prod");
        pod(prod, "web-1", "10.0.0.1");
        store.create(gns("a", "10.1.0.0/16"));
        startSyncer(KINDS);
        cb.awaitStatus(SyncerStatus.IN_SYNC);
        return prod;
    }

    private void startSyncer(ResourceKind... kinds) {
        syncer = new WatcherSyncer(store, Set.of(kinds), cb,
                SyncerOptions.defaults().withRetryDelays(Duration.ofMillis(10), Duration.ofMillis(200)));
        syncer.start();
    }

    private static Resource gns(String name, String net) {
        return new GlobalNetworkSet(ObjectMeta.named(name), new GlobalNetworkSetSpec(List.of(net)));
    }

    /** Writes a GlobalNetworkPolicy custom resource as kubectl would, around the datastore and its validation. */
    private void writePolicy(String name, String selector, double order) {
        String crName = "default." + name;
        GenericKubernetesResource cr = new GenericKubernetesResource();
        cr.setApiVersion("crd.projectcalico.org/v1");
        cr.setKind("GlobalNetworkPolicy");
        cr.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName(crName).build());
        cr.setAdditionalProperty("spec", Map.of("tier", "default", "order", order, "selector", selector,
                "types", List.of("Ingress")));
        var policies = kubernetes().genericKubernetesResources(TestCustomResources.context(ResourceKind.GLOBAL_NETWORK_POLICY));
        GenericKubernetesResource current = policies.withName(crName).get();
        if (current == null) {
            policies.resource(cr).create();
        } else {
            cr.getMetadata().setResourceVersion(current.getMetadata().getResourceVersion());
            policies.resource(cr).update();
        }
    }

    private static ListAppender<ILoggingEvent> captureInvalidObjectLog() {
        ListAppender<ILoggingEvent> log = new ListAppender<>();
        log.start();
        ((Logger) LoggerFactory.getLogger(INVALID_OBJECTS_LOGGER)).addAppender(log);
        return log;
    }

    private static List<String> messages(ListAppender<ILoggingEvent> log) {
        synchronized (log.list) {
            return log.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
        }
    }

    private static void awaitLines(ListAppender<ILoggingEvent> log, int n) {
        Await.until("waiting for " + n + " log lines", Duration.ofSeconds(20), () -> messages(log).size() >= n);
        assertThat(messages(log)).hasSize(n);
    }

    /** Creates namespace {@code base-<case>} with its {@code default} service account; {@return its name}. */
    protected String namespace(String base) {
        String name = base + suffix;
        kubernetes().namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(name).endMetadata().build())
                .create();
        ignoreConflict(() -> kubernetes().serviceAccounts().inNamespace(name)
                .resource(new ServiceAccountBuilder().withNewMetadata().withName("default").endMetadata().build()).create());
        return name;
    }

    /** Deletes a namespace and waits until it is gone (its pods first: without a kubelet nothing confirms their end). */
    private void deleteNamespace(String name) {
        kubernetes().pods().inNamespace(name).withGracePeriod(0).delete();
        kubernetes().namespaces().withName(name).delete();
        kubernetes().namespaces().withName(name).waitUntilCondition(Objects::isNull, 60, TimeUnit.SECONDS);
    }

    /** A pod on {@value #NODE} with Calico's IP annotation, as the CNI plugin writes it. */
    private void pod(String namespace, String name, String ip) {
        ignoreConflict(() -> kubernetes().nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE)
                .endMetadata().build()).create());
        Pod p = new PodBuilder().withNewMetadata().withName(name).withLabels(Map.of("app", "web"))
                .withAnnotations(Map.of("cni.projectcalico.org/podIP", ip + "/32")).endMetadata()
                .withNewSpec().withNodeName(NODE).addNewContainer().withName("c").withImage("busybox").endContainer()
                .endSpec().build();
        kubernetes().pods().inNamespace(namespace).resource(p).create();
    }

    private static Service service(String name, String clusterIp) {
        return new ServiceBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec().withClusterIP(clusterIp)
                .addNewPort().withName("http").withProtocol("TCP").withPort(80).endPort().endSpec().build();
    }

    private static ResourceKey endpoint(String namespace, String pod) {
        return ResourceKey.of(ResourceKind.WORKLOAD_ENDPOINT, namespace,
                calico.api.k8s.WorkloadEndpointNames.forPod(NODE, pod));
    }

    private static void ignoreConflict(Runnable create) {
        try {
            create.run();
        } catch (KubernetesClientException e) {
            if (e.getCode() != 409) {
                throw e;
            }
        }
    }
}
