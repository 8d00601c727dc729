package calico.libcalico.syncer;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.GlobalNetworkSet;
import calico.api.model.GlobalNetworkSetSpec;
import calico.api.model.KubernetesService;
import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.kubernetes.KubernetesApiServer;
import calico.libcalico.datastore.kubernetes.KubernetesDatastore;
import calico.libcalico.datastore.kubernetes.TestServices;
import calico.libcalico.datastore.memory.MemoryDatastore;
import calico.libcalico.typha.SyncerType;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The unchanged {@link WatcherSyncer} over the kubernetes datastore: in sync with Calico
 * resources and Kubernetes-derived ones, following changes, and healing an expired watch
 * revision (410) by listing again.
 */
class KubernetesSyncerTest {

    private static final ResourceKind[] KINDS = {
        ResourceKind.GLOBAL_NETWORK_SET, ResourceKind.WORKLOAD_ENDPOINT, ResourceKind.PROFILE};

    private final RecordingCallbacks cb = new RecordingCallbacks();
    private KubernetesApiServer server;
    private KubernetesClient k8s;
    private KubernetesDatastore store;
    private WatcherSyncer syncer;

    @BeforeEach
    void start() {
        server = new KubernetesApiServer();
        k8s = server.client();
        store = server.datastore();
    }

    @AfterEach
    void stop() {
        if (syncer != null) {
            syncer.stop();
        }
        store.close();
        server.close();
    }

    @Test
    void reachesInSyncWithCalicoAndKubernetesDerivedResourcesAndFollowsChanges() throws Exception {
        namespace("prod");
        pod("web-1", "10.0.0.1");
        store.create(gns("a", "10.1.0.0/16"));

        startSyncer();
        cb.awaitStatus(SyncerStatus.IN_SYNC);

        assertThat(cb.view().keySet()).containsExactlyInAnyOrder(
                ResourceKey.of(ResourceKind.GLOBAL_NETWORK_SET, "a"),
                ResourceKey.of(ResourceKind.WORKLOAD_ENDPOINT, "prod", "node--1-k8s-web--1-eth0"),
                ResourceKey.of(ResourceKind.PROFILE, "kns.default"),
                ResourceKey.of(ResourceKind.PROFILE, "kns.prod"));
        assertThat(cb.view()).isEqualTo(RecordingCallbacks.snapshot(store, KINDS));

        pod("web-2", "10.0.0.2");
        store.update(gns("a", "10.2.0.0/16"));
        namespace("dev");
        k8s.namespaces().withName("prod").delete();
        cb.awaitConverged(store, KINDS);

        assertThat(cb.view()).containsKey(ResourceKey.of(ResourceKind.WORKLOAD_ENDPOINT, "prod", "node--1-k8s-web--2-eth0"))
                .containsKey(ResourceKey.of(ResourceKind.PROFILE, "kns.dev"))
                .doesNotContainKey(ResourceKey.of(ResourceKind.PROFILE, "kns.prod"));
        assertThat(((GlobalNetworkSet) cb.view().get(ResourceKey.of(ResourceKind.GLOBAL_NETWORK_SET, "a"))).spec().nets())
                .containsExactly("10.2.0.0/16");
        assertThat(cb.violations()).isEmpty();
    }

    @Test
    void anExpiredRevisionIsHealedByListingAgain() throws Exception {
        namespace("prod");
        pod("web-1", "10.0.0.1");
        store.create(gns("a", "10.1.0.0/16"));
        startSyncer();
        cb.awaitStatus(SyncerStatus.IN_SYNC);

        // Changes the watches never see, then their revision is compacted away and the streams drop:
        // fabric8 resumes each from its last revision, gets 410 Gone, and the syncer must relist.
        server.partition(true);
        store.delete(ResourceKey.of(ResourceKind.GLOBAL_NETWORK_SET, "a"), null);
        store.create(gns("b", "10.3.0.0/16"));
        pod("web-3", "10.0.0.3");
        k8s.pods().inNamespace("prod").withName("web-1").delete();
        namespace("dev");
        server.compact();
        server.partition(false);
        server.dropWatches();

        cb.awaitConverged(store, KINDS);
        assertThat(cb.view().keySet()).containsExactlyInAnyOrder(
                ResourceKey.of(ResourceKind.GLOBAL_NETWORK_SET, "b"),
                ResourceKey.of(ResourceKind.WORKLOAD_ENDPOINT, "prod", "node--1-k8s-web--3-eth0"),
                ResourceKey.of(ResourceKind.PROFILE, "kns.default"),
                ResourceKey.of(ResourceKind.PROFILE, "kns.prod"),
                ResourceKey.of(ResourceKind.PROFILE, "kns.dev"));
        assertThat(cb.violations()).isEmpty();

        // And it keeps following after the relist.
        store.create(gns("c", "10.4.0.0/16"));
        cb.awaitConverged(store, KINDS);
        assertThat(cb.view()).containsKey(ResourceKey.of(ResourceKind.GLOBAL_NETWORK_SET, "c"));
    }

    /**
     * Felix's syncer carries Kubernetes Services on this datastore (and only here: other backends
     * present none), created, updated and deleted in the Kubernetes API.
     */
    @Test
    void felixsSyncerCarriesKubernetesServices() throws Exception {
        namespace("shop");
        k8s.services().inNamespace("shop").resource(TestServices.service("api", "10.96.0.10", 80))
                .create();
        Set<ResourceKind> kinds = SyncerType.FELIX.kindsOn(store);
        assertThat(kinds).contains(ResourceKind.KUBERNETES_SERVICE);
        try (MemoryDatastore memory = new MemoryDatastore()) {
            assertThat(SyncerType.FELIX.kindsOn(memory)).doesNotContain(ResourceKind.KUBERNETES_SERVICE)
                    .hasSize(kinds.size() - 1);
        }
        syncer = new WatcherSyncer(store, kinds, cb,
                SyncerOptions.defaults().withRetryDelays(Duration.ofMillis(10), Duration.ofMillis(200)));
        syncer.start();
        cb.awaitStatus(SyncerStatus.IN_SYNC);
        ResourceKey api = ResourceKey.of(ResourceKind.KUBERNETES_SERVICE, "shop", "api");
        assertThat(((KubernetesService) cb.view().get(api)).spec().clusterIPs()).contains("10.96.0.10");

        k8s.services().inNamespace("shop").withName("api").edit(s -> new ServiceBuilder(s).editSpec()
                .withExternalIPs("192.0.2.99").endSpec().build());
        k8s.services().inNamespace("shop").resource(TestServices.service("web", "10.96.0.11", 8080))
                .create();
        cb.awaitConverged(store, kinds.toArray(ResourceKind[]::new));
        assertThat(((KubernetesService) cb.view().get(api)).spec().externalIPs()).containsExactly("192.0.2.99");
        assertThat(cb.view()).containsKey(ResourceKey.of(ResourceKind.KUBERNETES_SERVICE, "shop", "web"));

        k8s.services().inNamespace("shop").withName("api").delete();
        cb.awaitConverged(store, kinds.toArray(ResourceKind[]::new));
        assertThat(cb.view()).doesNotContainKey(api);
        assertThat(cb.violations()).isEmpty();
    }

    private void startSyncer() {
        syncer = new WatcherSyncer(store, Set.of(KINDS), cb,
                SyncerOptions.defaults().withRetryDelays(Duration.ofMillis(10), Duration.ofMillis(200)));
        syncer.start();
    }

    private static Resource gns(String name, String net) {
        return new GlobalNetworkSet(ObjectMeta.named(name), new GlobalNetworkSetSpec(List.of(net)));
    }

    private void namespace(String name) {
        k8s.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(name).endMetadata().build()).create();
    }

    private void pod(String name, String ip) {
        Pod p = new PodBuilder().withNewMetadata().withName(name).withLabels(Map.of("app", "web")).endMetadata()
                .withNewSpec().withNodeName("node-1").addNewContainer().withName("c").withImage("busybox").endContainer()
                .endSpec().withNewStatus().withPodIP(ip).withPhase("Running").endStatus().build();
        k8s.pods().inNamespace("prod").resource(p).create();
    }
}
