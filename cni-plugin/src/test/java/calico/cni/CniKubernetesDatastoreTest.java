package calico.cni;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.k8s.WorkloadEndpointNames;
import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.model.WorkloadEndpoint;
import calico.cni.spec.CniResponse;
import calico.dataplane.testing.NetNs;
import calico.libcalico.datastore.kubernetes.KubernetesApiServer;
import calico.libcalico.ipam.IpamClient;
import calico.libcalico.ipam.IpamOptions;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code datastore_type: kubernetes}, as Calico's plugin runs on KDD: the WorkloadEndpoint is not
 * a stored resource. ADD writes the pod's {@code cni.projectcalico.org/podIP}, {@code podIPs} and
 * {@code containerID} annotations and the endpoint is what libcalico's kubernetes datastore derives
 * from the Pod; DEL blanks the IP annotations (the container ID stays, so a repeated DEL can tell
 * which sandbox it sees). The API server is libcalico's test server (fabric8's CRUD dispatcher),
 * pods are real network namespaces.
 *
 * <p>The API server listens on a veth between the test's namespace and the node namespace
 * ({@code c7-k…}, a /30 of 198.18.0.0/15), so it is reachable from threads in either: the
 * plugin's datastore client runs inside the node namespace, the test's own client outside.
 * Deleting the node namespace deletes the pair.
 */
class CniKubernetesDatastoreTest {
    private static final ResourceDefinitionContext CALICO_WEPS = new ResourceDefinitionContext.Builder()
            .withGroup("crd.projectcalico.org").withVersion("v1").withKind("WorkloadEndpoint")
            .withPlural("workloadendpoints").withNamespaced(true).build();

    @TempDir
    Path dir;

    private KubernetesApiServer api;
    private CniHarness h;
    private Path kubeconfig;

    @BeforeEach
    void start() throws Exception {
        int subnet = ThreadLocalRandom.current().nextInt(256);
        int quad = ThreadLocalRandom.current().nextInt(64) * 4;
        String outside = "198.18." + subnet + "." + (quad + 1);
        String inside = "198.18." + subnet + "." + (quad + 2);
        String link = "c7-k" + HexFormat.of().formatHex(new byte[] {(byte) subnet, (byte) quad});
        // Node namespace first, then the link into it, then the server on the link, then the harness.
        NetNs node = NetNs.create(CniHarness.PREFIX + "k");
        try {
            run("ip", "link", "add", link, "type", "veth", "peer", "name", "c7-kp", "netns", node.name());
            run("ip", "addr", "add", outside + "/30", "dev", link);
            run("ip", "link", "set", link, "up");
            node.exec("ip", "addr", "add", inside + "/30", "dev", "c7-kp");
            node.exec("ip", "link", "set", "c7-kp", "up");
            api = new KubernetesApiServer(InetAddress.getByName(outside));
            h = new CniHarness(null, api.datastore(), node);
        } catch (RuntimeException | Error e) {
            node.close();
            if (api != null) {
                api.close();
            }
            throw e;
        }
        kubeconfig = dir.resolve("kubeconfig");
        Files.writeString(kubeconfig, """
                apiVersion: v1
                kind: Config
                clusters: [{name: c, cluster: {server: "%s"}}]
                users: [{name: u, user: {token: t}}]
                contexts: [{name: x, context: {cluster: c, user: u}}]
                current-context: x
                """.formatted(api.url()));
        api.client().namespaces().resource(new NamespaceBuilder().withNewMetadata().withName("shop")
                .withLabels(Map.of("team", "checkout")).endMetadata().build()).create();
        api.client().namespaces().resource(new NamespaceBuilder().withNewMetadata().withName("lab")
                .withLabels(Map.of("team", "research")).endMetadata().build()).create();
        // Two pools; only the namespace selector tells them apart.
        pool("pool-other", "10.208.0.0/24", "team == 'other'");
        pool("pool-checkout", "10.208.1.0/24", "team == 'checkout'");
    }

    @AfterEach
    void stop() {
        if (h != null) {
            h.close();
        }
        if (api != null) {
            api.close();
        }
    }

    @AfterAll
    static void noNamespaceLeftBehind() {
        assertThat(CniHarness.leftoverNamespaces()).isEmpty();
    }

    private static void run(String... command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            if (p.waitFor() != 0) {
                throw new IllegalStateException(String.join(" ", command) + ": " + out);
            }
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private void pool(String name, String cidr, String namespaceSelector) {
        h.store.create(new IPPool(ObjectMeta.named(name),
                new IPPoolSpec(cidr, null, null, null, null, null, 26, null, namespaceSelector, null, null)));
    }

    private void pod(String ns, String name) {
        api.client().pods().inNamespace(ns).resource(new PodBuilder()
                .withNewMetadata().withName(name).withNamespace(ns).withLabels(Map.of("app", name)).endMetadata()
                .withNewSpec().withNodeName(CniHarness.NODE).withServiceAccountName("sa1")
                .addNewContainer().withName("c").withImage("x").endContainer().endSpec()
                .build()).create();
    }

    private Map<String, String> annotations(String ns, String name) {
        Pod p = api.client().pods().inNamespace(ns).withName(name).get();
        return p.getMetadata().getAnnotations() == null ? Map.of() : p.getMetadata().getAnnotations();
    }

    private String conf() {
        return """
                {"cniVersion":"1.0.0","name":"k8s-pod-network","type":"calico","datastore_type":"kubernetes",
                 "nodename":"%s","mtu":1440,"log_level":"info",
                 "ipam":{"type":"calico-ipam","assign_ipv4":"true"},
                 "policy":{"type":"k8s"},"kubernetes":{"kubeconfig":"%s"}}""".formatted(CniHarness.NODE, kubeconfig);
    }

    @Test
    void addAnnotatesThePodAndDelBlanksTheIpsNoEndpointIsStored() {
        pod("shop", "cart-0");
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
        // No WorkloadEndpoint custom resource: the endpoint is derived from the Pod.
        assertThat(api.client().genericKubernetesResources(CALICO_WEPS).inAnyNamespace().list().getItems()).isEmpty();
        String name = WorkloadEndpointNames.forPod(CniHarness.NODE, "cart-0");
        WorkloadEndpoint wep = (WorkloadEndpoint) h.store.get(ResourceKey.of(ResourceKind.WORKLOAD_ENDPOINT, "shop", name))
                .orElseThrow();
        assertThat(wep.spec().ipNetworks()).containsExactly(address);
        assertThat(wep.spec().containerID()).isEqualTo(cid);
        assertThat(wep.spec().interfaceName()).isEqualTo(WorkloadEndpointNames.interfaceName("shop", "cart-0"));
        assertThat(wep.spec().profiles()).contains("kns.shop", "ksa.shop.sa1");
        assertThat(wep.metadata().labels()).containsEntry("app", "cart-0");

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
        assertThat(new IpamClient(h.store, IpamOptions.defaults()).addressesByHandle("k8s-pod-network." + cid)).isEmpty();
        assertThat(h.caliLinks()).isEmpty();
        assertThat(h.store.get(ResourceKey.of(ResourceKind.WORKLOAD_ENDPOINT, "shop", name))
                .map(w -> ((WorkloadEndpoint) w).spec().ipNetworks()).orElse(java.util.List.of())).isEmpty();
    }

    @Test
    void aNamespaceNoPoolSelectsGetsAnIpamErrorAndNothingIsLeft() {
        pod("lab", "probe-0");
        NetNs netns = h.pod();
        CniResponse r = h.call(CniHarness.env("ADD", CniHarness.containerId(), CniHarness.netns(netns), "lab", "probe-0"), conf());
        assertThat(r.exitCode()).isNotZero();
        assertThat(h.parse(r).path("code").asInt()).as(r.stdout()).isEqualTo(100);
        assertThat(h.parse(r).path("msg").asText()).contains("namespace labels {team=research}").contains("namespaceSelector");
        assertThat(h.caliLinks()).isEmpty();
        assertThat(annotations("lab", "probe-0")).doesNotContainKey("cni.projectcalico.org/podIP");
    }
}
