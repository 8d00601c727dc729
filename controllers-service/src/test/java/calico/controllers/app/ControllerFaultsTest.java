package calico.controllers.app;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.KubeControllersConfiguration;
import calico.api.model.KubeControllersConfigurationSpec;
import calico.api.model.ObjectMeta;
import calico.api.net.IpAddress;
import calico.libcalico.datastore.kubernetes.KubernetesDatastore;
import calico.libcalico.ipam.AutoAssignRequest;
import calico.libcalico.ipam.IntendedUse;
import calico.libcalico.ipam.IpamClient;
import calico.libcalico.ipam.IpamOptions;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.KubeControlPlaneExtension;
import calico.libcalico.testing.TcpProxy;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Faults on a real control plane: a leader that dies without releasing its Lease (its connection to
 * the API server cut and held) is replaced within 15 s; the API server going away pauses the
 * controllers, which resume afterwards, release what leaked once and keep a live pod's address.
 */
class ControllerFaultsTest {

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension();

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static KubernetesDatastore store;
    private static IpamClient ipam;

    @BeforeAll
    static void setUp() {
        store = KUBE.datastore();
        ipam = new IpamClient(store, IpamOptions.defaults());
        store.create(new IPPool(ObjectMeta.named("f-pool"), new IPPoolSpec("10.79.0.0/24", null, null, null, null, null,
                29, null, null, null, null)));
        // Only the node controller, a 2 s grace period, no metrics port.
        store.create(new KubeControllersConfiguration(ObjectMeta.named("default"), new KubeControllersConfigurationSpec(
                null, null, null, 0, new KubeControllersConfigurationSpec.Controllers(
                new KubeControllersConfigurationSpec.NodeController(null, null, null, "2s"), null, null, null, null, null, null),
                null)));
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    private static String holder() {
        Lease l = KUBE.client().leases().inNamespace("default").withName("calico-kube-controllers").get();
        return l == null || l.getSpec() == null ? null : l.getSpec().getHolderIdentity();
    }

    @Test
    void aLeaderCutOffFromTheApiServerIsReplacedWithin15Seconds() {
        URI api = KUBE.controlPlane().apiServerUrl();
        try (TcpProxy proxy = new TcpProxy(new InetSocketAddress(api.getHost(), api.getPort()));
             ConfigurableApplicationContext a = TestApps.kubernetes(KUBE.kubeconfig(), "cut-a",
                     "--K8S_API_ENDPOINT=https://127.0.0.1:" + proxy.port())) {
            Await.until("cut-a leads", WAIT, () -> "cut-a".equals(holder()));
            try (ConfigurableApplicationContext b = TestApps.kubernetes(KUBE.kubeconfig(), "cut-b")) {
                proxy.hold(true);
                proxy.cut(); // a can neither renew nor release: as dead, for the Lease
                Instant dead = Instant.now();
                Await.until("cut-b leads", Duration.ofSeconds(30), () -> "cut-b".equals(holder()));
                assertThat(Duration.between(dead, Instant.now())).isLessThan(Duration.ofSeconds(15));
                assertThat(a.getBean(ControllersDaemon.class).running()).as("cut-a stopped before cut-b took over")
                        .isEmpty();
                proxy.hold(false);
            }
        }
    }

    @Test
    void theApiServerGoingAwayPausesTheControllersWhichResumeAfterwards() throws Exception {
        KUBE.client().nodes().resource(new NodeBuilder().withNewMetadata().withName("f-n1").endMetadata().build()).create();
        KUBE.client().nodes().resource(new NodeBuilder().withNewMetadata().withName("f-n2").endMetadata().build()).create();
        IpAddress live = ipam.autoAssign(new AutoAssignRequest("k8s-pod-network.f-live", "f-n1", 1, 0, List.of(), List.of(),
                Map.of("node", "f-n1", "namespace", "default", "pod", "f-live"), IntendedUse.WORKLOAD)).ipv4().get(0).address();
        KUBE.client().pods().inNamespace("default").resource(new PodBuilder().withNewMetadata().withName("f-live")
                .addToAnnotations("cni.projectcalico.org/podIP", live + "/32").endMetadata().withNewSpec()
                .withNodeName("f-n1").addNewContainer().withName("c").withImage("pause").endContainer().endSpec().build())
                .create();
        try (ConfigurableApplicationContext app = TestApps.kubernetes(KUBE.kubeconfig(), "faults",
                "--KUBE_CONTROLLERS_LEADER_ELECTION=false")) {
            ControllersDaemon daemon = app.getBean(ControllersDaemon.class);
            Await.until("a first node run", WAIT, () -> daemon.lastNodeRun() != null);
            KUBE.controlPlane().killApiServer();
            try {
                // While it is away, addresses leak (a CNI DEL that never came) on a node that will go.
                assignEtcdLess();
            } finally {
                KUBE.controlPlane().startApiServer();
            }
            ipam.autoAssign(new AutoAssignRequest("k8s-pod-network.f-gone", "f-n1", 1, 0, List.of(), List.of(),
                    Map.of("node", "f-n1", "namespace", "default", "pod", "f-gone"), IntendedUse.WORKLOAD));
            ipam.autoAssign(new AutoAssignRequest("k8s-pod-network.f-n2-pod", "f-n2", 1, 0, List.of(), List.of(),
                    Map.of("node", "f-n2", "namespace", "default", "pod", "f-n2-pod"), IntendedUse.WORKLOAD));
            KUBE.client().nodes().withName("f-n2").delete();
            Await.until("the leaks released after the API server came back", WAIT,
                    () -> ipam.addressesByHandle("k8s-pod-network.f-gone").isEmpty()
                            && ipam.addressesByHandle("k8s-pod-network.f-n2-pod").isEmpty());
            assertThat(ipam.addressesByHandle("k8s-pod-network.f-live")).containsExactly(live);
            assertThat(ipam.check().problems()).isEmpty();
        } finally {
            KUBE.client().pods().inNamespace("default").withName("f-live").withGracePeriod(0).delete();
        }
    }

    /** Nothing to do while the API server is down but let the controllers fail a run. */
    private static void assignEtcdLess() {
        Await.until("the API server is away", Duration.ofSeconds(10), () -> {
            try {
                KUBE.client().nodes().withName("f-n1").get();
                return false;
            } catch (RuntimeException e) {
                return true;
            }
        });
    }
}
