package calico.controllers.app;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.ControllerMode;
import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.KubeControllersConfiguration;
import calico.api.model.Node;
import calico.api.model.NodeSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.etcd.EtcdConfig;
import calico.libcalico.datastore.etcd.EtcdDatastore;
import calico.libcalico.ipam.AutoAssignRequest;
import calico.libcalico.ipam.IntendedUse;
import calico.libcalico.ipam.IpamClient;
import calico.libcalico.ipam.IpamOptions;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.EtcdAdmin;
import calico.libcalico.testing.EtcdServerExtension;
import calico.libcalico.testing.KubeControlPlaneExtension;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The whole application on a real etcd beside a real kube-apiserver (Nodes, the Lease): Calico Nodes
 * of deleted Kubernetes Nodes deleted with their addresses and blocks, Calico Nodes of no Kubernetes
 * node kept, Kubernetes labels synced onto Calico Nodes (and removed again) while the Calico Node's own
 * labels stay, KubeControllersConfiguration default in etcd with {@code SYNC_NODE_LABELS} listed,
 * etcd compacted every {@code COMPACTION_PERIOD}.
 */
class EtcdControllersTest {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();
    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutCrds().withoutControllers();

    private static final Duration WAIT = Duration.ofSeconds(30);

    private static Node calicoNode(String name, boolean kubernetes) {
        return new Node(ObjectMeta.named(name), new NodeSpec(new NodeSpec.BGP(null, "192.0.2.40/24", null, null, null),
                null, null, null, null, kubernetes ? List.of(new NodeSpec.OrchRef(name, "k8s")) : List.of(), null, null,
                null));
    }

    @Test
    void controllersOnEtcd() {
        EtcdAdmin.wipe(ETCD.endpoint());
        try (EtcdDatastore store = new EtcdDatastore(EtcdConfig.of(ETCD.endpoint()))) {
            IpamClient ipam = new IpamClient(store, IpamOptions.defaults());
            store.create(new IPPool(ObjectMeta.named("ec-pool"), IPPoolSpec.ofCidr("10.78.0.0/24")));
            store.create(calicoNode("ec-1", true));
            store.create(calicoNode("ec-2", true));
            store.create(calicoNode("ec-bare", false));
            for (String n : List.of("ec-1", "ec-2")) {
                KUBE.client().nodes().resource(new NodeBuilder().withNewMetadata().withName(n).addToLabels("zone", "a")
                        .endMetadata().build()).create();
            }
            ipam.autoAssign(new AutoAssignRequest("k8s-pod-network.ec-2-pod", "ec-2", 1, 0, List.of(), List.of(),
                    Map.of("node", "ec-2", "namespace", "default", "pod", "ec-2-pod"), IntendedUse.WORKLOAD));
            ipam.autoAssign(new AutoAssignRequest("ipip-tunnel-addr-ec-2", "ec-2", 1, 0, List.of(), List.of(),
                    Map.of("node", "ec-2", "type", "ipipTunnelAddress"), IntendedUse.TUNNEL));

            try (ConfigurableApplicationContext app = TestApps.start("etcd-replica", List.of("--DATASTORE_TYPE=etcdv3",
                    "--ETCD_ENDPOINTS=" + ETCD.endpoint(), "--KUBECONFIG=" + KUBE.kubeconfig(), "--SYNC_NODE_LABELS=true",
                    "--COMPACTION_PERIOD=1s"))) {
                KubeControllersConfiguration kcc = Await.value("KubeControllersConfiguration default in etcd", WAIT,
                        () -> store.get(new ResourceKey(ResourceKind.KUBE_CONTROLLERS_CONFIGURATION, null, "default"))
                                .map(KubeControllersConfiguration.class::cast).filter(k -> k.status() != null));
                assertThat(kcc.status().environmentVars()).containsEntry("SYNC_NODE_LABELS", "true")
                        .doesNotContainKey("DATASTORE_TYPE");
                assertThat(kcc.status().runningConfig().controllers().node().syncLabels()).isEqualTo(ControllerMode.Enabled);
                assertThat(kcc.status().runningConfig().etcdV3CompactionPeriod()).isEqualTo("1s");
                long before = store.currentRevision();

                // Labels: the Kubernetes Node's copied; the Calico Node's own kept; a removed one removed.
                Await.until("ec-1 carries zone=a", WAIT, () -> "a".equals(node(store, "ec-1").metadata().labels().get("zone")));
                Node e1 = node(store, "ec-1");
                Map<String, String> own = new java.util.HashMap<>(e1.metadata().labels());
                own.put("mine", "x");
                store.update(e1.withMetadata(e1.metadata().withLabels(own)));
                KUBE.client().nodes().withName("ec-1").edit(n -> new NodeBuilder(n).editMetadata().removeFromLabels("zone")
                        .addToLabels("rack", "r1").endMetadata().build());
                Await.until("ec-1: zone gone, rack=r1, mine kept", WAIT, () -> {
                    Map<String, String> l = node(store, "ec-1").metadata().labels();
                    return !l.containsKey("zone") && "r1".equals(l.get("rack")) && "x".equals(l.get("mine"));
                });
                assertThat(node(store, "ec-1").metadata().annotations().get("projectcalico.org/kube-labels"))
                        .isEqualTo("{\"rack\":\"r1\"}");

                // A Kubernetes Node deleted: its Calico Node, addresses and blocks go; a non-Kubernetes node stays.
                KUBE.client().nodes().withName("ec-2").delete();
                Await.until("ec-2 cleaned up", WAIT, () -> store.get(ResourceKey.of(ResourceKind.NODE, "ec-2")).isEmpty()
                        && ipam.addressesByHandle("k8s-pod-network.ec-2-pod").isEmpty()
                        && ipam.addressesByHandle("ipip-tunnel-addr-ec-2").isEmpty()
                        && store.list(ResourceKind.BLOCK_AFFINITY).items().isEmpty());
                assertThat(store.get(ResourceKey.of(ResourceKind.NODE, "ec-bare"))).isPresent();
                assertThat(store.get(ResourceKey.of(ResourceKind.NODE, "ec-1"))).isPresent();
                assertThat(ipam.check().problems()).isEmpty();

                // Compaction every etcdV3CompactionPeriod (COMPACTION_PERIOD 1s here): a revision read when the
                // controllers had just started is compacted away, so a list at it fails.
                Await.until("revision " + before + " compacted away", WAIT, () -> {
                    try {
                        store.listAt(ResourceKind.NODE, null, null, before);
                        return false;
                    } catch (calico.libcalico.datastore.DatastoreException.Compacted e) {
                        return true;
                    }
                });
                assertThat(node(store, "ec-1").metadata().labels()).as("the current revision reads as ever")
                        .containsEntry("rack", "r1");
            }
        }
    }

    private static Node node(EtcdDatastore store, String name) {
        return store.get(ResourceKey.of(ResourceKind.NODE, name)).map(Node.class::cast).orElseThrow();
    }

    @Test
    void kubernetesObjectsAreKeptInEtcd() {
        EtcdAdmin.wipe(ETCD.endpoint());
        var k8s = KUBE.client();
        k8s.namespaces().resource(new io.fabric8.kubernetes.api.model.NamespaceBuilder().withNewMetadata().withName("sync-ns")
                .addToLabels("team", "a").endMetadata().build()).create();
        k8s.serviceAccounts().inNamespace("sync-ns").resource(new io.fabric8.kubernetes.api.model.ServiceAccountBuilder()
                .withNewMetadata().withName("sync-sa").endMetadata().build()).create();
        k8s.network().v1().networkPolicies().inNamespace("sync-ns").resource(
                new io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder().withNewMetadata().withName("deny")
                        .endMetadata().withNewSpec().withNewPodSelector().endPodSelector().withPolicyTypes("Ingress").endSpec()
                        .build()).create();
        try (EtcdDatastore store = new EtcdDatastore(EtcdConfig.of(ETCD.endpoint()))) {
            String wepName = calico.api.k8s.WorkloadEndpointNames.forPod("ec-1", "p1");
            store.create(new calico.api.model.WorkloadEndpoint(ObjectMeta.namespaced("sync-ns", wepName)
                    .withLabels(Map.of("stale", "yes")), new calico.api.model.WorkloadEndpointSpec("k8s", null, "ec-1", "c1",
                    "p1", "eth0", null, List.of("10.78.0.5/32"), null, null, null, List.of("kns.sync-ns"), "cali1234", null,
                    null, null)));
            try (ConfigurableApplicationContext app = TestApps.start("etcd-sync", List.of("--DATASTORE_TYPE=etcdv3",
                    "--ETCD_ENDPOINTS=" + ETCD.endpoint(), "--KUBECONFIG=" + KUBE.kubeconfig(),
                    "--ENABLED_CONTROLLERS=policy,namespace,serviceaccount,workloadendpoint",
                    "--KUBE_CONTROLLERS_LEADER_ELECTION=false"))) {
                ResourceKey nsProfile = ResourceKey.of(ResourceKind.PROFILE, "kns.sync-ns");
                ResourceKey saProfile = ResourceKey.of(ResourceKind.PROFILE, "ksa.sync-ns.sync-sa");
                ResourceKey knp = ResourceKey.of(ResourceKind.NETWORK_POLICY, "sync-ns", "knp.default.deny");
                Await.until("kns, ksa and knp in etcd", WAIT, () -> store.get(nsProfile).isPresent()
                        && store.get(saProfile).isPresent() && store.get(knp).isPresent());
                calico.api.model.Profile p = (calico.api.model.Profile) store.get(nsProfile).orElseThrow();
                assertThat(p.spec().labelsToApply()).containsEntry("pcns.team", "a");
                long namespaceLists = TestApps.clusterLists(KUBE, "namespaces");

                k8s.namespaces().withName("sync-ns").edit(n -> new io.fabric8.kubernetes.api.model.NamespaceBuilder(n)
                        .editMetadata().addToLabels("team", "b").endMetadata().build());
                Await.until("kns.sync-ns follows the label", WAIT, () -> "b".equals(((calico.api.model.Profile) store
                        .get(nsProfile).orElseThrow()).spec().labelsToApply().get("pcns.team")));
                k8s.network().v1().networkPolicies().inNamespace("sync-ns").withName("deny").delete();
                Await.until("knp.default.deny gone from etcd", WAIT, () -> store.get(knp).isEmpty());

                // Someone edits a synced profile in etcd: it is put back.
                calico.api.model.Profile sa = (calico.api.model.Profile) store.get(saProfile).orElseThrow();
                store.update(new calico.api.model.Profile(sa.metadata(), new calico.api.model.ProfileSpec(null, null,
                        Map.of("forged", "x"))));
                Await.until("ksa profile restored", WAIT, () -> !((calico.api.model.Profile) store.get(saProfile)
                        .orElseThrow()).spec().labelsToApply().containsKey("forged"));
                assertThat(TestApps.clusterLists(KUBE, "namespaces") - namespaceLists)
                        .as("the namespace controller's runs read its informer's cache, not a LIST each").isZero();

                // Pod labels onto the WorkloadEndpoint the CNI plugin wrote in etcd.
                k8s.pods().inNamespace("sync-ns").resource(new io.fabric8.kubernetes.api.model.PodBuilder().withNewMetadata()
                        .withName("p1").addToLabels("app", "x").addToAnnotations("cni.projectcalico.org/podIP", "10.78.0.5/32")
                        .endMetadata().withNewSpec().withNodeName("ec-1").withServiceAccountName("sync-sa")
                        .withAutomountServiceAccountToken(false).addNewContainer().withName("c").withImage("pause")
                        .endContainer().endSpec().build()).create();
                ResourceKey wep = ResourceKey.of(ResourceKind.WORKLOAD_ENDPOINT, "sync-ns", wepName);
                Await.until("the pod's labels on its WorkloadEndpoint", WAIT, () -> {
                    Map<String, String> l = store.get(wep).orElseThrow().metadata().labels();
                    return "x".equals(l.get("app")) && !l.containsKey("stale");
                });
                assertThat(((calico.api.model.WorkloadEndpoint) store.get(wep).orElseThrow()).spec().ipNetworks())
                        .as("nothing but labels changes").containsExactly("10.78.0.5/32");
            } finally {
                k8s.pods().inNamespace("sync-ns").withName("p1").withGracePeriod(0).delete();
            }
        }
    }
}
