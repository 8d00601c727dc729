package calico.cni;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.k8s.WorkloadEndpointNames;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.model.WorkloadEndpoint;
import calico.cni.spec.CniResponse;
import calico.dataplane.testing.NetNs;
import calico.libcalico.testing.EtcdServerExtension;
import com.sun.net.httpserver.HttpServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * With {@code policy.type: k8s} and a kubeconfig, the endpoint carries the pod's labels,
 * service account (label and {@code ksa.} profile) and named ports, read from an API server
 * (here a minimal HTTP server answering the one GET, inside the host namespace).
 */
class CniKubernetesPodTest {
    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    @TempDir
    Path dir;

    private CniHarness h;
    private HttpServer api;

    @BeforeEach
    void start() {
        h = new CniHarness(ETCD.endpoint());
        api = h.host.call(() -> {
            HttpServer s = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 8);
            s.createContext("/api/v1/namespaces/shop/pods/", ex -> {
                byte[] body;
                int status;
                if (ex.getRequestURI().getPath().endsWith("/cart-0")) {
                    status = 200;
                    body = """
                            {"apiVersion":"v1","kind":"Pod","metadata":{"name":"cart-0","namespace":"shop","generateName":"cart-",
                             "labels":{"app":"cart","tier":"web"}},
                             "spec":{"serviceAccountName":"cart-sa","containers":[{"name":"c","image":"x",
                              "ports":[{"name":"http","containerPort":8080,"protocol":"TCP"},{"containerPort":9090}]}]}}"""
                            .getBytes(StandardCharsets.UTF_8);
                } else {
                    status = 404;
                    body = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"NotFound\",\"code\":404}"
                            .getBytes(StandardCharsets.UTF_8);
                }
                ex.getResponseHeaders().set("Content-Type", "application/json");
                ex.sendResponseHeaders(status, body.length);
                ex.getResponseBody().write(body);
                ex.close();
            });
            s.start();
            return s;
        });
    }

    @AfterAll
    static void noNamespaceLeftBehind() {
        assertThat(CniHarness.leftoverNamespaces()).isEmpty();
    }

    @AfterEach
    void stop() {
        api.stop(0);
        h.close();
    }

    private String conf() throws Exception {
        return CniHarness.withKubeconfig(h.calicoConf("1.0.0", "10.207.0.0/24"), dir, api.getAddress().getPort());
    }

    @Test
    void endpointCarriesPodLabelsServiceAccountAndNamedPorts() throws Exception {
        h.pool("k-pool", "10.207.0.0/24", 26);
        NetNs pod = h.pod();
        CniResponse r = h.call(CniHarness.env("ADD", CniHarness.containerId(), CniHarness.netns(pod), "shop", "cart-0"), conf());
        assertThat(r.exitCode()).as(r.stdout()).isZero();
        WorkloadEndpoint w = (WorkloadEndpoint) h.store.get(ResourceKey.of(ResourceKind.WORKLOAD_ENDPOINT, "shop",
                WorkloadEndpointNames.forPod(CniHarness.NODE, "cart-0"))).orElseThrow();
        assertThat(w.metadata().labels()).containsEntry("app", "cart").containsEntry("tier", "web")
                .containsEntry("projectcalico.org/serviceaccount", "cart-sa")
                .containsEntry("projectcalico.org/namespace", "shop");
        assertThat(w.metadata().generateName()).as("flow logs aggregate under it").isEqualTo("cart-");
        assertThat(w.spec().profiles()).containsExactly("kns.shop", "ksa.shop.cart-sa");
        assertThat(w.spec().serviceAccountName()).isEqualTo("cart-sa");
        assertThat(w.spec().ports()).hasSize(1);
        assertThat(w.spec().ports().get(0).name()).isEqualTo("http");
        assertThat(w.spec().ports().get(0).port()).isEqualTo(8080);
    }

    @Test
    void unknownPodIsAnErrorAndAllocatesNothing() throws Exception {
        h.pool("k-pool2", "10.207.1.0/24", 26);
        NetNs pod = h.pod();
        String base = conf().replace("10.207.0.0/24", "10.207.1.0/24");
        CniResponse r = h.call(CniHarness.env("ADD", CniHarness.containerId(), CniHarness.netns(pod), "shop", "ghost"), base);
        assertThat(r.exitCode()).isNotZero();
        assertThat(h.parse(r).path("code").asInt()).isEqualTo(3);
        assertThat(h.parse(r).path("msg").asText()).contains("shop/ghost");
        assertThat(h.caliLinks()).isEmpty();
    }
}
