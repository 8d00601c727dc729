package calico.ctl;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.BlockAffinity;
import calico.api.model.ClusterInformation;
import calico.api.model.IPAMBlock;
import calico.api.model.Node;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.net.IpAddress;
import calico.libcalico.datastore.config.DatastoreConfig;
import calico.libcalico.ipam.AssignIpRequest;
import calico.libcalico.ipam.IpamClient;
import calico.libcalico.ipam.IpamOptions;
import calico.libcalico.testing.EtcdServerExtension;
import calico.libcalico.testing.KubeControlPlaneExtension;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code calicoctl datastore migrate} from a real etcd into a real kube-apiserver: lock, export, import, unlock,
 * and the preconditions that refuse each step (not locked, wrong datastore, a target that is not empty).
 */
class DatastoreMigrateTest {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutControllers();

    @TempDir
    Path tmp;

    private String stdout;
    private String stderr;

    private Map<String, String> etcd() {
        return Map.of("DATASTORE_TYPE", "etcdv3", "ETCD_ENDPOINTS", ETCD.endpoint().toString());
    }

    private Map<String, String> kubernetes() {
        return Map.of("DATASTORE_TYPE", "kubernetes", "KUBECONFIG", KUBE.kubeconfig().toString());
    }

    private int run(Map<String, String> env, String... args) {
        CtlRun r = CtlRun.of(env, "", args);
        stdout = r.stdout();
        stderr = r.stderr();
        return r.status();
    }

    @Test
    void exportsALockedEtcdClusterAndImportsItIntoKubernetes() throws Exception {
        Path source = tmp.resolve("cluster.yaml");
        Files.writeString(source, """
                apiVersion: projectcalico.org/v3
                kind: ClusterInformation
                metadata: {name: default}
                spec: {clusterGUID: guid-from-etcd, calicoVersion: v3.30.0-java, datastoreReady: true}
                ---
                apiVersion: projectcalico.org/v3
                kind: Node
                metadata: {name: node-a}
                spec:
                  bgp: {ipv4Address: 10.0.0.1/24}
                  orchRefs: [{nodeName: node-a, orchestrator: k8s}]
                ---
                apiVersion: projectcalico.org/v3
                kind: IPPool
                metadata: {name: pool}
                spec: {cidr: 10.20.0.0/16, blockSize: 26, vxlanMode: Always}
                ---
                apiVersion: projectcalico.org/v3
                kind: GlobalNetworkPolicy
                metadata: {name: deny-blocked}
                spec: {selector: all(), order: 10, ingress: [{action: Deny, source: {nets: [192.0.2.0/24]}}]}
                ---
                apiVersion: projectcalico.org/v3
                kind: NetworkSet
                metadata: {name: partners, namespace: shop}
                spec: {nets: [198.51.100.0/24]}
                ---
                apiVersion: projectcalico.org/v3
                kind: FelixConfiguration
                metadata: {name: node.node-a}
                spec: {logSeverityScreen: Debug}
                """);
        assertThat(run(etcd(), "apply", "-f", source.toString())).as(stderr).isZero();
        try (var store = DatastoreConfig.fromEnvironment(etcd()).open()) {
            new IpamClient(store, IpamOptions.defaults()).assignIp(new AssignIpRequest("pod-1",
                    IpAddress.parse("10.20.0.5"), "node-a", Map.of("namespace", "shop", "pod", "web")));
        }

        assertThat(run(etcd(), "datastore", "migrate", "export")).isEqualTo(1);
        assertThat(stderr).contains("Datastore is not locked.");
        assertThat(run(etcd(), "datastore", "migrate", "lock")).as(stderr).isZero();
        assertThat(run(etcd(), "datastore", "migrate", "export")).as(stderr).isZero();
        String export = stdout;
        assertThat(export.split("===\n", -1)).hasSize(3);
        assertThat(export).contains("kind: IPPoolList", "kind: GlobalNetworkPolicyList", "/calico/ipam/v2/assignment/ipv4/block/10.20.0.0-26")
                .doesNotContain("resourceVersion", "uid:");
        Path file = tmp.resolve("export.txt");
        Files.writeString(file, export);

        // Into etcd: refused, the target must be kubernetes.
        assertThat(run(etcd(), "datastore", "migrate", "import", "-f", file.toString())).isEqualTo(1);
        assertThat(stderr).contains("Datastore type must be kubernetes");

        // What Kubernetes must already hold: the nodes, and the namespaces of namespaced resources.
        KUBE.client().nodes().resource(new NodeBuilder().withNewMetadata().withName("node-a").endMetadata().build()).create();
        KUBE.client().namespaces().resource(new NamespaceBuilder().withNewMetadata().withName("shop").endMetadata().build())
                .create();
        assertThat(run(kubernetes(), "datastore", "migrate", "import", "-f", file.toString())).as(stderr).isZero();
        assertThat(stdout).contains("Datastore locked.", "Importing IPAM resources",
                "Datastore information successfully imported.");

        try (var kdd = KUBE.datastore()) {
            assertThat(kdd.get(ResourceKey.of(ResourceKind.IP_POOL, null, "pool"))).isPresent();
            assertThat(kdd.get(ResourceKey.of(ResourceKind.GLOBAL_NETWORK_POLICY, null, "deny-blocked"))).isPresent();
            assertThat(kdd.get(ResourceKey.of(ResourceKind.NETWORK_SET, "shop", "partners"))).isPresent();
            assertThat(kdd.get(ResourceKey.of(ResourceKind.FELIX_CONFIGURATION, null, "node.node-a"))).isPresent();
            assertThat(kdd.get(ResourceKey.of(ResourceKind.NODE, null, "node-a")).map(Node.class::cast)
                    .map(n -> n.spec().bgp().ipv4Address())).contains("10.0.0.1/24");
            var info = (ClusterInformation) kdd.get(ResourceKey.of(ResourceKind.CLUSTER_INFORMATION, null, "default"))
                    .orElseThrow();
            assertThat(info.spec().clusterGUID()).isEqualTo("guid-from-etcd");
            assertThat(info.spec().datastoreReady()).isFalse(); // left locked until the operator unlocks
            assertThat(kdd.list(ResourceKind.IPAM_BLOCK).items()).singleElement()
                    .satisfies(b -> assertThat(((IPAMBlock) b).spec().cidr()).isEqualTo("10.20.0.0/26"));
            assertThat(kdd.list(ResourceKind.BLOCK_AFFINITY).items()).singleElement()
                    .satisfies(a -> assertThat(((BlockAffinity) a).spec().node()).isEqualTo("node-a"));
            // The address moved with its handle: releasing by the handle frees it on the new datastore.
            var ipam = new IpamClient(kdd, IpamOptions.defaults());
            assertThat(ipam.addressesByHandle("pod-1")).containsExactly(IpAddress.parse("10.20.0.5"));
        }

        assertThat(run(kubernetes(), "datastore", "migrate", "unlock")).as(stderr).isZero();
        assertThat(stdout).isEqualTo("Datastore unlocked.\n");
        assertThat(run(kubernetes(), "get", "clusterinfo", "-o", "custom-columns=NAME,DATASTOREREADY")).isZero();
        assertThat(stdout).contains("default   true");

        // A second import finds Calico data there and refuses.
        assertThat(run(kubernetes(), "datastore", "migrate", "import", "-f", file.toString())).isEqualTo(1);
        assertThat(stderr).contains("Datastore already has Calico resources: Found existing Calico IPPool resource.");
    }
}
