package calico.felix.e2e;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.api.codec.ResourceCodec;
import calico.api.k8s.KubeObjectMeta;
import calico.api.k8s.KubePod;
import calico.api.k8s.KubeServiceAccount;
import calico.api.k8s.KubeNamespace;
import calico.api.k8s.WorkloadEndpointNames;
import calico.dataplane.testing.NetNs;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.kubernetes.TestServices;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.KubeControlPlaneExtension;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Rules' {@code services} matches with real packets through the whole felix on a real
 * kube-apiserver, on nftables and on iptables: Services {@code api} and {@code clients} are plain
 * Kubernetes Services whose EndpointSlices the test writes itself (no controller manager).
 * {@code client} may only send to {@code api} (egress, destination services: the endpoints'
 * address and port), and {@code a} accepts only from {@code clients} (ingress, source services:
 * addresses). Traffic to api's endpoint passes, on another port or to another pod it is dropped;
 * then api's EndpointSlice moves its endpoint from {@code a} to {@code b}, and the match follows.
 * Each backend gets its own node and pod namespaces ({@code svc-*}); the API objects are made once.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ServiceMatchKddE2ETest {

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutControllers();

    private static final ResourceCodec CODEC = ResourceCodec.get();
    private static final String NS = "shop";
    private static final String CLIENT_IP = "10.71.0.1";
    private static final String A_IP = "10.71.0.2";
    private static final String B_IP = "10.71.0.3";
    private static final Duration PROGRAMMED = Duration.ofSeconds(15);

    private Datastore store;
    private KubernetesClient k8s;
    private String skip;

    @BeforeAll
    void cluster() {
        skip = NetNs.available() ? null : "needs root to create network namespaces";
        if (skip != null) {
            return;
        }
        store = KUBE.datastore();
        k8s = KUBE.client();
        Writes.clusterReady(store);
        ApiServerObjects objects = new ApiServerObjects(k8s);
        objects.namespace(new KubeNamespace(KubeObjectMeta.of(null, NS, Map.of())));
        objects.serviceAccount(new KubeServiceAccount(KubeObjectMeta.of(NS, "default", Map.of())));
        pod(objects, "client", CLIENT_IP);
        pod(objects, "a", A_IP);
        pod(objects, "b", B_IP);
        for (String svc : List.of("api", "clients")) {
            k8s.services().inNamespace(NS).resource(new ServiceBuilder().withNewMetadata().withName(svc).endMetadata()
                    .withNewSpec().addNewPort().withName("http").withProtocol("TCP").withPort(80).endPort().endSpec()
                    .build()).create();
        }
        k8s.discovery().v1().endpointSlices().inNamespace(NS)
                .resource(TestServices.endpointSlice("clients-1", "clients", 80, CLIENT_IP)).create();
        store.create(CODEC.parse("""
                apiVersion: projectcalico.org/v3
                kind: NetworkPolicy
                metadata: {name: to-api, namespace: shop}
                spec:
                  selector: app == 'client'
                  types: [Egress]
                  egress:
                    - action: Allow
                      protocol: TCP
                      destination: {services: {name: api}}
                """));
        store.create(CODEC.parse("""
                apiVersion: projectcalico.org/v3
                kind: NetworkPolicy
                metadata: {name: from-clients, namespace: shop}
                spec:
                  selector: app == 'a'
                  types: [Ingress]
                  ingress:
                    - action: Allow
                      source: {services: {name: clients, namespace: shop}}
                """));
    }

    private static void pod(ApiServerObjects objects, String name, String ip) {
        objects.pod(new KubePod(KubeObjectMeta.of(NS, name, Map.of("app", name)),
                new KubePod.Spec(Cluster.NODE, "default", false, List.of(new KubePod.Container("main", List.of())), null),
                new KubePod.Status(ip, null, "Running")));
    }

    @AfterAll
    void close() {
        if (store != null) {
            store.close();
        }
    }

    @Test
    void nftables() {
        run(Backend.NFTABLES);
    }

    @Test
    void iptables() {
        run(Backend.IPTABLES_NFT);
    }

    private void run(Backend backend) {
        assumeTrue(skip == null, () -> skip);
        assumeTrue(backend.unavailableReason() == null, () -> backend + ": " + backend.unavailableReason());
        // api's one endpoint is a, whatever an earlier backend's run left
        k8s.discovery().v1().endpointSlices().inNamespace(NS)
                .resource(TestServices.endpointSlice("api-1", "api", 80, A_IP)).createOr(s -> s.update());
        List<AutoCloseable> world = new ArrayList<>();
        try {
            NetNs host = owned(world, NetNs.create("svc-h"));
            host.exec("sysctl", "-qw", "net.ipv4.ip_forward=1");
            host.uplink();
            NetNs client = wired(world, host, "client", CLIENT_IP);
            NetNs a = wired(world, host, "a", A_IP);
            NetNs b = wired(world, host, "b", B_IP);
            for (NetNs pod : List.of(a, b)) {
                String ip = pod == a ? A_IP : B_IP;
                world.add(pod.tcpListener(ip, 80));
                world.add(pod.tcpListener(ip, 8080));
            }
            FelixProcess felix = owned(world, new FelixProcess(FelixProcess.kubernetesArgs(KUBE.kubeconfig()), host.name(),
                    backend, "Warning"));
            felix.awaitReady(Duration.ofSeconds(60));

            expect(backend, "client -> a:80 (api's endpoint)", client, A_IP, 80, true);
            expect(backend, "client -> b:80 (not an endpoint of api)", client, B_IP, 80, false);
            expect(backend, "client -> a:8080 (not a port of api)", client, A_IP, 8080, false);
            expect(backend, "b -> a:80 (b is not an endpoint of clients)", b, A_IP, 80, false);

            k8s.discovery().v1().endpointSlices().inNamespace(NS)
                    .resource(TestServices.endpointSlice("api-1", "api", 80, B_IP)).update();
            expect(backend, "client -> b:80 (api's endpoint moved to b)", client, B_IP, 80, true);
            expect(backend, "client -> a:80 (no longer api's)", client, A_IP, 80, false);
        } finally {
            for (int i = world.size() - 1; i >= 0; i--) {
                try {
                    world.get(i).close();
                } catch (Exception e) {
                    System.err.println("closing " + world.get(i) + ": " + e);
                }
            }
        }
    }

    /** Polls a TCP connection until it shows {@code passes}. */
    private static void expect(Backend backend, String what, NetNs from, String ip, int port, boolean passes) {
        Await.until(backend + ": " + what + (passes ? " passes" : " is dropped"), PROGRAMMED,
                () -> from.tcpConnects(ip, port, Duration.ofMillis(300)) == passes);
    }

    private static <T extends AutoCloseable> T owned(List<AutoCloseable> world, T thing) {
        world.add(thing);
        return thing;
    }

    /** A pod's namespace wired to {@code host} as the CNI plugin leaves it. */
    private static NetNs wired(List<AutoCloseable> world, NetNs host, String pod, String ip) {
        NetNs ns = owned(world, NetNs.create("svc-" + pod.charAt(0)));
        Cluster.wireAsCni(host, WorkloadEndpointNames.interfaceName(NS, pod), ns, ip);
        return ns;
    }
}
