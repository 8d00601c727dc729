package calico.cni;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.groups.Tuple.tuple;

import calico.api.k8s.WorkloadEndpointNames;
import calico.api.model.IPPool;
import calico.api.model.IpamNames;
import calico.api.model.IPPoolSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.model.WorkloadEndpoint;
import calico.api.model.WorkloadEndpointSpec;
import calico.api.net.Cidr;
import calico.cni.spec.CniResponse;
import calico.dataplane.testing.LoopbackForward;
import calico.dataplane.testing.NetNs;
import calico.libcalico.testing.KubeControlPlaneExtension;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ContainerPortBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code datastore_type: kubernetes} against a real kube-apiserver, as Calico's plugin runs on
 * KDD. Pods are real API objects (scheduled to this node by {@code spec.nodeName}, with labels, a
 * service account and named ports); the plugin reads them with the kubeconfig named by
 * {@code kubernetes.kubeconfig}, as Calico's network configuration has it, for a user holding
 * only Calico's {@code calico-cni-plugin} ClusterRole. IPAM blocks, handles and affinities are
 * Calico's custom resources; the WorkloadEndpoint is not a stored resource: ADD writes the Pod's
 * {@code cni.projectcalico.org/podIP}, {@code podIPs} and {@code containerID} annotations and the
 * endpoint is what the datastore derives from the Pod; DEL blanks the IP annotations (the
 * container ID stays, so a repeated DEL can tell which sandbox it sees).
 *
 * <p>The plugin runs inside a node namespace (its host veths land there); the API server listens
 * on the test's loopback, which {@link LoopbackForward} makes the node namespace's loopback too,
 * so the kubeconfig's URL and certificate are used unchanged.
 */
class CniKubernetesDatastoreTest {

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutControllers();

    private static final String HANDLE_PREFIX = "k8s-pod-network.";
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Calico's CNI ClusterRole: what the plugin may do on KDD, and nothing more. */
    private static final String CNI_RBAC = """
            apiVersion: rbac.authorization.k8s.io/v1
            kind: ClusterRole
            metadata: {name: calico-cni-plugin}
            rules:
              - apiGroups: [""]
                resources: [pods, nodes, namespaces]
                verbs: [get]
              - apiGroups: [""]
                resources: [pods/status]
                verbs: [patch]
              - apiGroups: [crd.projectcalico.org]
                resources: [blockaffinities, ipamblocks, ipamhandles, clusterinformations, ippools, ipreservations, ipamconfigs]
                verbs: [get, list, create, update, delete]
            ---
            apiVersion: rbac.authorization.k8s.io/v1
            kind: ClusterRoleBinding
            metadata: {name: calico-cni-plugin}
            roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: calico-cni-plugin}
            subjects:
              - {apiGroup: rbac.authorization.k8s.io, kind: User, name: calico-cni-plugin}
            """;

    private static Path kubeconfig;

    private CniHarness h;
    private LoopbackForward apiServer;

    @BeforeAll
    static void cluster(KubernetesClient client) {
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName(CniHarness.NODE).endMetadata().build())
                .create();
        namespace(client, "shop", Map.of("team", "checkout"));
        namespace(client, "lab", Map.of("team", "research"));
        KUBE.controlPlane().kubectlWithInput(CNI_RBAC, "apply", "-f", "-");
        kubeconfig = KUBE.controlPlane().kubeconfig("calico-cni-plugin", List.of());
        try (var store = KUBE.datastore()) {
            // Two pools; only the namespace selector tells them apart.
            for (String[] p : List.of(new String[] {"pool-other", "10.208.0.0/24", "team == 'other'"},
                    new String[] {"pool-checkout", "10.208.1.0/24", "team == 'checkout'"})) {
                store.create(new IPPool(ObjectMeta.named(p[0]),
                        new IPPoolSpec(p[1], null, null, null, null, null, 26, null, p[2], null, null)));
            }
        }
    }

    private static void namespace(KubernetesClient client, String name, Map<String, String> labels) {
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(name).withLabels(labels)
                .endMetadata().build()).create();
        // Named by the pods; without the controller manager nothing else creates it.
        client.serviceAccounts().inNamespace(name).resource(new ServiceAccountBuilder().withNewMetadata()
                .withName("sa1").withLabels(Map.of("role", "shopper")).endMetadata().build()).create();
    }

    @BeforeEach
    void node() {
        NetNs host = NetNs.create(CniHarness.PREFIX + "k");
        try {
            apiServer = LoopbackForward.into(host, KUBE.controlPlane().apiServerUrl().getPort());
            h = new CniHarness(null, KUBE.datastore(), host);
        } catch (RuntimeException | Error e) {
            if (apiServer != null) {
                apiServer.close();
            }
            host.close();
            throw e;
        }
    }

    @AfterEach
    void stop() {
        if (h != null) {
            h.close();
        }
        if (apiServer != null) {
            apiServer.close();
        }
    }

    @AfterAll
    static void noNamespaceLeftBehind() {
        assertThat(CniHarness.leftoverNamespaces()).isEmpty();
    }

    // ---------------------------------------------------------------- scenarios

    @Test
    void addAnnotatesThePodAndDelBlanksTheIpsNoEndpointIsStored() throws Exception {
        pod("shop", "cart-0", CniHarness.NODE);
        NetNs netns = h.pod();
        String cid = CniHarness.containerId();
        Map<String, String> add = CniHarness.env("ADD", cid, CniHarness.netns(netns), "shop", "cart-0");
        CniResponse r = h.call(add, conf());
        assertThat(r.exitCode()).as(r.stdout()).isZero();
        String address = h.parse(r).path("ips").get(0).path("address").asText();
        assertThat(address).as("from the pool whose namespaceSelector picks team checkout").startsWith("10.208.1.");
        assertThat(netns.exec("ip", "-o", "addr", "show", "eth0")).contains(address);

        // What Calico writes into the Pod.
        assertThat(annotations("shop", "cart-0"))
                .containsEntry("cni.projectcalico.org/podIP", address)
                .containsEntry("cni.projectcalico.org/podIPs", address)
                .containsEntry("cni.projectcalico.org/containerID", cid);
        // No WorkloadEndpoint custom resource (Calico's CRDs have none on KDD): the endpoint is derived from the Pod.
        assertThat(KUBE.controlPlane().kubectlAs(KUBE.kubeconfig(), "get", "workloadendpoints.crd.projectcalico.org",
                "-A").output()).contains("doesn't have a resource type \"workloadendpoints\"");
        String name = WorkloadEndpointNames.forPod(CniHarness.NODE, "cart-0");
        WorkloadEndpoint wep = endpoint("shop", name);
        assertThat(wep.spec().ipNetworks()).containsExactly(address);
        assertThat(wep.spec().containerID()).isEqualTo(cid);
        assertThat(wep.spec().node()).isEqualTo(CniHarness.NODE);
        assertThat(wep.spec().interfaceName()).isEqualTo(WorkloadEndpointNames.interfaceName("shop", "cart-0"));
        assertThat(wep.spec().profiles()).containsExactly("kns.shop", "ksa.shop.sa1");
        assertThat(wep.spec().serviceAccountName()).isEqualTo("sa1");
        assertThat(wep.spec().ports()).extracting(WorkloadEndpointSpec.EndpointPort::name,
                        WorkloadEndpointSpec.EndpointPort::port)
                .containsExactlyInAnyOrder(tuple("http", 8080),
                        tuple("dns", 53));
        assertThat(wep.metadata().labels()).containsEntry("app", "cart-0")
                .containsEntry("projectcalico.org/namespace", "shop")
                .containsEntry("projectcalico.org/orchestrator", "k8s")
                .containsEntry("projectcalico.org/serviceaccount", "sa1");

        // IPAM is Calico's custom resources: the handle holds the address of a block affine to this node.
        JsonNode handle = kubectlJson("get", "ipamhandles.crd.projectcalico.org", HANDLE_PREFIX + cid);
        assertThat(handle.path("spec").path("handleID").asText()).isEqualTo(HANDLE_PREFIX + cid);
        String blockCidr = handle.path("spec").path("block").fieldNames().next();
        assertThat(blockCidr).startsWith("10.208.1.").endsWith("/26");
        JsonNode block = kubectlJson("get", "ipamblocks.crd.projectcalico.org",
                IpamNames.blockName(Cidr.parse(blockCidr)));
        assertThat(block.path("spec").path("affinity").asText()).isEqualTo("host:" + CniHarness.NODE);
        assertThat(kubectlJson("get", "blockaffinities.crd.projectcalico.org").path("items"))
                .anySatisfy(a -> assertThat(a.path("spec").path("node").asText() + " " + a.path("spec").path("cidr").asText())
                        .isEqualTo(CniHarness.NODE + " " + blockCidr));

        // A repeated ADD of the same container: the same answer, nothing new.
        CniResponse again = h.call(add, conf());
        assertThat(again.exitCode()).as(again.stdout()).isZero();
        assertThat(h.parse(again).path("ips").get(0).path("address").asText()).isEqualTo(address);

        Map<String, String> del = CniHarness.env("DEL", cid, CniHarness.netns(netns), "shop", "cart-0");
        for (int i = 0; i < 2; i++) {
            CniResponse d = h.call(del, conf());
            assertThat(d.exitCode()).as("DEL #" + (i + 1) + ": " + d.stdout()).isZero();
            assertThat(annotations("shop", "cart-0"))
                    .containsEntry("cni.projectcalico.org/podIP", "")
                    .containsEntry("cni.projectcalico.org/podIPs", "")
                    .containsEntry("cni.projectcalico.org/containerID", cid);
        }
        assertThat(KUBE.controlPlane().kubectlAs(KUBE.kubeconfig(), "get", "ipamhandles.crd.projectcalico.org",
                HANDLE_PREFIX + cid).output()).contains("NotFound");
        assertThat(h.caliLinks()).isEmpty();
        assertThat(h.store.get(ResourceKey.of(ResourceKind.WORKLOAD_ENDPOINT, "shop", name))
                .map(w -> ((WorkloadEndpoint) w).spec().ipNetworks()).orElse(List.of())).isEmpty();
    }

    @Test
    void aNamespaceNoPoolSelectsGetsAnIpamErrorAndNothingIsLeft() {
        pod("lab", "probe-0", CniHarness.NODE);
        String cid = CniHarness.containerId();
        CniResponse r = h.call(CniHarness.env("ADD", cid, CniHarness.netns(h.pod()), "lab", "probe-0"), conf());
        assertThat(r.exitCode()).isNotZero();
        assertThat(h.parse(r).path("code").asInt()).as(r.stdout()).isEqualTo(100);
        assertThat(h.parse(r).path("msg").asText()).contains("namespace labels {kubernetes.io/metadata.name=lab, team=research}").contains("namespaceSelector");
        assertNothingLeft("lab", "probe-0", cid);
    }

    @Test
    void anUnknownPodIsCode3AndNothingIsAllocated() {
        String cid = CniHarness.containerId();
        CniResponse r = h.call(CniHarness.env("ADD", cid, CniHarness.netns(h.pod()), "shop", "ghost-0"), conf());
        assertThat(h.parse(r).path("code").asInt()).as(r.stdout()).isEqualTo(3);
        assertThat(h.parse(r).path("msg").asText()).startsWith("K8S_POD_NAME:").contains("shop/ghost-0");
        assertThat(h.caliLinks()).isEmpty();
        assertThat(handles()).noneMatch(n -> n.equals(HANDLE_PREFIX + cid));
    }

    @Test
    void aPodScheduledToAnotherNodeIsRefusedAndTheAddIsUndone() {
        pod("shop", "elsewhere-0", "another-node");
        String cid = CniHarness.containerId();
        CniResponse r = h.call(CniHarness.env("ADD", cid, CniHarness.netns(h.pod()), "shop", "elsewhere-0"), conf());
        assertThat(r.exitCode()).as(r.stdout()).isNotZero();
        assertThat(h.parse(r).path("code").asInt()).as(r.stdout()).isEqualTo(102);
        assertThat(h.parse(r).path("msg").asText()).contains("elsewhere-0");
        assertNothingLeft("shop", "elsewhere-0", cid);
    }

    @Test
    void withTheApiServerDownAddIsTryAgainLaterAndWorksOnceItIsBack() {
        pod("shop", "late-0", CniHarness.NODE);
        String cid = CniHarness.containerId();
        NetNs netns = h.pod();
        Map<String, String> add = CniHarness.env("ADD", cid, CniHarness.netns(netns), "shop", "late-0");
        KUBE.controlPlane().killApiServer();
        CniResponse down;
        long t0 = System.nanoTime();
        try {
            down = h.call(add, conf());
            System.out.printf("[cni kdd] ADD with the API server down answered in %d ms%n", (System.nanoTime() - t0) / 1_000_000);
        } finally {
            KUBE.controlPlane().startApiServer();
        }
        assertThat(h.parse(down).path("code").asInt()).as(down.stdout()).isEqualTo(11);
        assertThat(h.caliLinks()).isEmpty();
        assertNothingLeft("shop", "late-0", cid);

        CniResponse up = h.call(add, conf());
        assertThat(up.exitCode()).as(up.stdout()).isZero();
        assertThat(annotations("shop", "late-0")).containsEntry("cni.projectcalico.org/containerID", cid);
        CniResponse d = h.call(CniHarness.env("DEL", cid, CniHarness.netns(netns), "shop", "late-0"), conf());
        assertThat(d.exitCode()).as(d.stdout()).isZero();
    }

    // ---------------------------------------------------------------- helpers

    private String conf() {
        return """
                {"cniVersion":"1.0.0","name":"k8s-pod-network","type":"calico","datastore_type":"kubernetes",
                 "nodename":"%s","mtu":1440,"log_level":"info",
                 "ipam":{"type":"calico-ipam","assign_ipv4":"true"},
                 "policy":{"type":"k8s"},"kubernetes":{"kubeconfig":"%s"}}""".formatted(CniHarness.NODE, kubeconfig);
    }

    private static void pod(String ns, String name, String node) {
        KUBE.client().pods().inNamespace(ns).resource(new PodBuilder()
                .withNewMetadata().withName(name).withNamespace(ns).withLabels(Map.of("app", name)).endMetadata()
                .withNewSpec().withNodeName(node).withServiceAccountName("sa1")
                .addNewContainer().withName("c").withImage("registry.invalid/app:1")
                .withPorts(new ContainerPortBuilder().withName("http").withContainerPort(8080).withProtocol("TCP").build(),
                        new ContainerPortBuilder().withName("dns").withContainerPort(53).withProtocol("UDP").build())
                .endContainer().endSpec()
                .build()).create();
    }

    private static Map<String, String> annotations(String ns, String name) {
        Pod p = KUBE.client().pods().inNamespace(ns).withName(name).get();
        return p.getMetadata().getAnnotations() == null ? Map.of() : p.getMetadata().getAnnotations();
    }

    private WorkloadEndpoint endpoint(String ns, String name) {
        return (WorkloadEndpoint) h.store.get(ResourceKey.of(ResourceKind.WORKLOAD_ENDPOINT, ns, name)).orElseThrow();
    }

    private static JsonNode kubectlJson(String... args) throws Exception {
        String[] full = Arrays.copyOf(args, args.length + 2);
        full[args.length] = "-o";
        full[args.length + 1] = "json";
        return JSON.readTree(KUBE.kubectl(full));
    }

    private static List<String> handles() {
        try {
            List<String> out = new ArrayList<>();
            kubectlJson("get", "ipamhandles.crd.projectcalico.org").path("items")
                    .forEach(i -> out.add(i.path("spec").path("handleID").asText()));
            return out;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** No veth, no handle, no IP annotation: the failed ADD left nothing behind. */
    private void assertNothingLeft(String ns, String pod, String cid) {
        assertThat(h.caliLinks()).isEmpty();
        assertThat(handles()).noneMatch(n -> n.equals(HANDLE_PREFIX + cid));
        assertThat(annotations(ns, pod).getOrDefault("cni.projectcalico.org/podIP", "")).isEmpty();
    }
}
