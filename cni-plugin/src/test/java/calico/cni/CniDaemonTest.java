package calico.cni;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.k8s.WorkloadEndpointNames;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.model.WorkloadEndpoint;
import calico.cni.daemon.CniDaemon;
import calico.cni.spec.CniResponse;
import calico.dataplane.testing.NetNs;
import calico.libcalico.datastore.config.DatastoreConfig;
import calico.libcalico.datastore.etcd.EtcdConfig;
import calico.libcalico.testing.EtcdServerExtension;
import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The runtime's view: the C thin client forwarding to the daemon over its unix socket. */
class CniDaemonTest {
    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    @TempDir
    Path dir;

    private CniHarness h;
    private CniDaemon daemon;
    private Path client;
    private Path socket;

    @BeforeEach
    void start() throws Exception {
        h = new CniHarness(ETCD.endpoint());
        client = ThinClient.build();
        socket = dir.resolve("cni.sock");
        var usage = new DatastoreConfig(DatastoreConfig.Type.ETCDV3, EtcdConfig.of(h.etcd)).open();
        // Started from inside the host namespace: its threads (and the veths it makes) stay there.
        daemon = h.host.call(() -> CniDaemon.start(socket, 0, CniHarness.NODE, usage));
    }

    @AfterAll
    static void noNamespaceLeftBehind() {
        assertThat(CniHarness.leftoverNamespaces()).isEmpty();
    }

    @AfterEach
    void stop() {
        if (daemon != null) {
            daemon.close();
        }
        h.close();
    }

    private Map<String, String> env(String command, String cid, NetNs pod, String name) {
        Map<String, String> env = new HashMap<>(CniHarness.env(command, cid, CniHarness.netns(pod), "ns1", name));
        env.put("CALICO_CNI_SOCKET", socket.toString());
        return env;
    }

    @Test
    void addAndDelThroughTheThinClient() throws Exception {
        h.pool("d-pool", "10.205.0.0/24", 26);
        NetNs pod = h.pod();
        String cid = CniHarness.containerId();
        String conf = h.calicoConf("1.0.0", "10.205.0.0/24");
        CniResponse add = ThinClient.run(client, env("ADD", cid, pod, "thin"), conf);
        assertThat(add.exitCode()).as(add.stdout()).isZero();
        String address = h.parse(add).path("ips").get(0).path("address").asText();
        assertThat(address).startsWith("10.205.0.");
        assertThat(pod.exec("ip", "-o", "addr", "show", "eth0")).contains(address);

        // The daemon listens on the host namespace's loopback.
        HttpResponse<String> usage = h.host.call(() -> HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + daemon.httpPort() + "/ipam/v1/usage")).GET().build(),
                HttpResponse.BodyHandlers.ofString()));
        assertThat(usage.statusCode()).isEqualTo(200);
        assertThat(usage.body()).contains("10.205.0.0/24");

        CniResponse del = ThinClient.run(client, env("DEL", cid, pod, "thin"), conf);
        assertThat(del.exitCode()).as(del.stdout()).isZero();
        assertThat(del.stdout()).isEmpty();
        assertThat(h.caliLinks()).isEmpty();
    }

    @Test
    void concurrentCallsThroughTheDaemonNeverCollide() throws Exception {
        h.pool("d-par", "10.205.2.0/24", 28);
        String conf = h.calicoConf("1.0.0", "10.205.2.0/24");
        int n = 8;
        java.util.concurrent.ExecutorService exec = java.util.concurrent.Executors.newFixedThreadPool(n);
        try {
            java.util.List<java.util.concurrent.Future<CniResponse>> futures = new java.util.ArrayList<>();
            for (int i = 0; i < n; i++) {
                NetNs pod = h.pod();
                Map<String, String> env = env("ADD", CniHarness.containerId(), pod, "conc-" + i);
                futures.add(exec.submit(() -> ThinClient.run(client, env, conf)));
            }
            java.util.Set<String> ips = new java.util.HashSet<>();
            for (var f : futures) {
                CniResponse r = f.get();
                assertThat(r.exitCode()).as(r.stdout()).isZero();
                ips.add(h.parse(r).path("ips").get(0).path("address").asText());
            }
            assertThat(ips).hasSize(n);
            assertThat(h.caliLinks()).hasSize(n);
        } finally {
            exec.shutdownNow();
        }
    }

    @Test
    void errorsKeepTheirCodeAndExitStatus() throws Exception {
        NetNs pod = h.pod();
        CniResponse r = ThinClient.run(client, env("ADD", CniHarness.containerId(), pod, "bad"),
                h.calicoConf("1.0.0", "10.205.1.0/24").replace("\"mtu\"", "\"mtu_typo\""));
        assertThat(r.exitCode()).isEqualTo(1);
        JsonNode e = h.parse(r);
        assertThat(e.path("code").asInt()).isEqualTo(2);
        assertThat(e.path("msg").asText()).startsWith("mtu_typo:");

        CniResponse v = ThinClient.run(client, Map.of("CNI_COMMAND", "VERSION", "CALICO_CNI_SOCKET", socket.toString()),
                "{\"cniVersion\":\"1.0.0\"}");
        assertThat(v.exitCode()).isZero();
        assertThat(h.parse(v).path("supportedVersions").toString()).contains("1.0.0");
    }

    @Test
    void clientWithoutDaemonAnswersTryAgainLater() throws Exception {
        daemon.close();
        daemon = null;
        CniResponse r = ThinClient.run(client, Map.of("CNI_COMMAND", "VERSION", "CALICO_CNI_SOCKET", socket.toString()), "{}");
        assertThat(r.exitCode()).isEqualTo(1);
        JsonNode e = h.parse(r);
        assertThat(e.path("code").asInt()).isEqualTo(11);
        assertThat(e.path("msg").asText()).contains(socket.toString());
    }

    /**
     * ./calico up's arrangement: the daemon runs in this (root) namespace, where the datastore
     * and the Kubernetes API are, and does each call's host-side work inside a named namespace
     * standing in for the node's host side (CALICO_CNI_NETNS): the host veth lands there, never
     * here, and the pod lookup still reaches the API on this namespace's loopback.
     */
    @Test
    void hostSideWorkRunsInTheNamedHostNamespace() throws Exception {
        h.pool("d-ns", "10.205.3.0/24", 26);
        Path nsSocket = dir.resolve("cni-netns.sock");
        var usage = new DatastoreConfig(DatastoreConfig.Type.ETCDV3, EtcdConfig.of(h.etcd)).open();
        HttpServer api = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 8);
        api.createContext("/api/v1/namespaces/ns1/pods/named", ex -> {
            byte[] body = """
                    {"apiVersion":"v1","kind":"Pod","metadata":{"name":"named","namespace":"ns1","labels":{"app":"reached"}},
                     "spec":{"serviceAccountName":"default","containers":[{"name":"c","image":"x"}]}}"""
                    .getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().set("Content-Type", "application/json");
            ex.sendResponseHeaders(200, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
        api.start();
        try (CniDaemon inRoot = CniDaemon.start(nsSocket, 0, CniHarness.NODE, usage, h.host.name())) {
            NetNs pod = h.pod();
            String cid = CniHarness.containerId();
            String conf = CniHarness.withKubeconfig(h.calicoConf("1.0.0", "10.205.3.0/24"), dir, api.getAddress().getPort());
            Map<String, String> env = env("ADD", cid, pod, "named");
            env.put("CALICO_CNI_SOCKET", nsSocket.toString());
            CniResponse add = ThinClient.run(client, env, conf);
            assertThat(add.exitCode()).as(add.stdout()).isZero();
            String iface = calico.api.k8s.WorkloadEndpointNames.interfaceName("ns1", "named");
            assertThat(h.caliLinks()).containsExactly(iface);
            assertThat(new String(new ProcessBuilder("ip", "-o", "link", "show").start().getInputStream().readAllBytes()))
                    .doesNotContain(iface);
            String address = h.parse(add).path("ips").get(0).path("address").asText().replace("/32", "");
            assertThat(h.host.exec("ip", "route", "show")).contains(address + " dev " + iface);
            WorkloadEndpoint wep = (WorkloadEndpoint) h.store.get(ResourceKey.of(ResourceKind.WORKLOAD_ENDPOINT, "ns1",
                    WorkloadEndpointNames.forPod(CniHarness.NODE, "named"))).orElseThrow();
            assertThat(wep.metadata().labels()).as("read from the API on the root namespace's loopback")
                    .containsEntry("app", "reached");
            // The usage endpoint is on this namespace's loopback, with the datastore.
            HttpResponse<String> u = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + inRoot.httpPort() + "/ipam/v1/usage")).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(u.body()).contains("10.205.3.0/24");

            env.put("CNI_COMMAND", "DEL");
            CniResponse del = ThinClient.run(client, env, conf);
            assertThat(del.exitCode()).as(del.stdout()).isZero();
            assertThat(h.caliLinks()).isEmpty();
        } finally {
            api.stop(0);
        }
    }

    @Test
    void aMissingHostNamespaceIsRefusedNamingTheVariable() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> CniDaemon.start(dir.resolve("x.sock"), -1,
                        CniHarness.NODE, null, "cni-t-no-such-ns"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("CALICO_CNI_NETNS: /run/netns/cni-t-no-such-ns does not exist");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> CniDaemon.start(dir.resolve("y.sock"), -1,
                        CniHarness.NODE, null, "../etc"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("CALICO_CNI_NETNS: \"../etc\" is not a namespace name");
    }
}
