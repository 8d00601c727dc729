package calico.cni;

import static org.assertj.core.api.Assertions.assertThat;

import calico.cni.spec.CniResponse;
import calico.dataplane.testing.NetNs;
import calico.libcalico.testing.EtcdServerExtension;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A conflist run the way a runtime runs it: {@code loopback}, {@code calico} (with Debian's
 * {@code host-local} as its IPAM) and {@code portmap}, each given the previous result; DEL in
 * reverse order. The other plugins are the real binaries from /usr/lib/cni, run inside the
 * host namespace.
 */
class CniChainTest {
    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    @TempDir
    Path dataDir;

    private CniHarness h;

    @BeforeEach
    void node() {
        h = new CniHarness(ETCD.endpoint());
    }

    @AfterAll
    static void noNamespaceLeftBehind() {
        assertThat(CniHarness.leftoverNamespaces()).isEmpty();
    }

    @AfterEach
    void cleanUp() {
        h.close();
    }

    private List<ObjectNode> conflist() throws Exception {
        String list = """
                {"cniVersion":"1.0.0","name":"k8s-pod-network","plugins":[
                  {"type":"loopback"},
                  {"type":"calico","datastore_type":"etcdv3","etcd_endpoints":"%s","nodename":"%s",
                   "ipam":{"type":"host-local","ranges":[[{"subnet":"10.204.0.0/24"}]],"dataDir":"%s"}},
                  {"type":"portmap","snat":true,"capabilities":{"portMappings":true}}]}"""
                .formatted(h.etcd, CniHarness.NODE, dataDir);
        JsonNode root = h.json.readTree(list);
        List<ObjectNode> out = new ArrayList<>();
        for (JsonNode p : root.path("plugins")) {
            ObjectNode conf = ((ObjectNode) p).deepCopy();
            conf.put("cniVersion", root.path("cniVersion").asText());
            conf.put("name", root.path("name").asText());
            if (p.path("capabilities").path("portMappings").asBoolean(false)) {
                conf.remove("capabilities");
                conf.putObject("runtimeConfig").putArray("portMappings").addObject()
                        .put("hostPort", 18080).put("containerPort", 80).put("protocol", "tcp");
            }
            out.add(conf);
        }
        return out;
    }

    private CniResponse invoke(ObjectNode conf, Map<String, String> env) throws Exception {
        String stdin = h.json.writeValueAsString(conf);
        if (conf.path("type").asText().equals("calico")) {
            return h.call(env, stdin);
        }
        return h.host.call(() -> {
            ProcessBuilder pb = new ProcessBuilder(CniHarness.CNI_PATH + "/" + conf.path("type").asText());
            pb.environment().putAll(env);
            pb.redirectError(ProcessBuilder.Redirect.DISCARD);
            Process p = pb.start();
            try (OutputStream in = p.getOutputStream()) {
                in.write(stdin.getBytes(StandardCharsets.UTF_8));
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            return new CniResponse(p.waitFor(), out);
        });
    }

    @Test
    void loopbackCalicoWithHostLocalAndPortmapAddAndDelInOrder() throws Exception {
        NetNs pod = h.pod();
        String cid = CniHarness.containerId();
        List<ObjectNode> plugins = conflist();
        JsonNode prev = null;
        for (ObjectNode conf : plugins) {
            if (prev != null) {
                conf.set("prevResult", prev);
            }
            CniResponse r = invoke(conf, CniHarness.env("ADD", cid, CniHarness.netns(pod), "ns1", "chained"));
            assertThat(r.exitCode()).as(conf.path("type") + ": " + r.stdout()).isZero();
            prev = h.parse(r);
        }
        // The final result carries lo (loopback), calico's two ends, and the host-local address on eth0.
        List<String> names = new ArrayList<>();
        prev.path("interfaces").forEach(i -> names.add(i.path("name").asText()));
        assertThat(names).contains("lo", "eth0");
        JsonNode podIp = null;
        for (JsonNode ip : prev.path("ips")) {
            if (ip.path("address").asText().startsWith("10.204.0.")) {
                podIp = ip;
            }
        }
        assertThat(podIp).as(prev.toString()).isNotNull();
        assertThat(names.get(podIp.path("interface").asInt())).isEqualTo("eth0");
        assertThat(pod.exec("ip", "-o", "addr", "show", "eth0")).contains(podIp.path("address").asText().replaceAll("/\\d+$", "/32"));
        assertThat(pod.exec("ip", "-o", "link", "show", "lo")).contains("UP");
        assertThat(Files.list(dataDir.resolve("k8s-pod-network")).map(f -> f.getFileName().toString()))
                .contains(podIp.path("address").asText().replaceAll("/\\d+$", ""));
        assertThat(h.host.exec("iptables-save", "-t", "nat")).contains("18080");

        // CHECK with the final result passes through calico.
        ObjectNode calico = plugins.get(1);
        calico.set("prevResult", prev);
        CniResponse check = invoke(calico, CniHarness.env("CHECK", cid, CniHarness.netns(pod), "ns1", "chained"));
        assertThat(check.exitCode()).as(check.stdout()).isZero();

        for (int i = plugins.size() - 1; i >= 0; i--) {
            ObjectNode conf = plugins.get(i);
            conf.set("prevResult", prev);
            CniResponse r = invoke(conf, CniHarness.env("DEL", cid, CniHarness.netns(pod), "ns1", "chained"));
            assertThat(r.exitCode()).as("DEL " + conf.path("type") + ": " + r.stdout()).isZero();
        }
        assertThat(h.caliLinks()).isEmpty();
        assertThat(h.host.exec("iptables-save", "-t", "nat")).doesNotContain("18080");
        // host-local released the address (its lease file is gone).
        try (var files = Files.list(dataDir.resolve("k8s-pod-network"))) {
            assertThat(files.map(f -> f.getFileName().toString())).noneMatch(f -> f.startsWith("10.204.0."));
        }
    }
}
