package calico.cni;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.ResourceKind;
import calico.cni.spec.CniResponse;
import calico.dataplane.testing.NetNs;
import calico.libcalico.ipam.IpamClient;
import calico.libcalico.ipam.IpamOptions;
import calico.libcalico.testing.EtcdServerExtension;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Bad input and failing steps: a CNI error with code and message, and nothing left behind. */
class CniBadInputTest {
    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    private CniHarness h;
    private IpamClient ipam;

    @BeforeEach
    void node() {
        h = new CniHarness(ETCD.endpoint());
        ipam = new IpamClient(h.store, IpamOptions.defaults());
    }

    @AfterAll
    static void noNamespaceLeftBehind() {
        assertThat(CniHarness.leftoverNamespaces()).isEmpty();
    }

    @AfterEach
    void cleanUp() {
        h.close();
    }

    private JsonNode error(CniResponse r) {
        assertThat(r.exitCode()).as(r.stdout()).isNotZero();
        JsonNode e = h.parse(r);
        assertThat(e.has("cniVersion")).isTrue();
        assertThat(e.path("msg").asText()).isNotEmpty();
        return e;
    }

    /** Nothing of the container exists: no veth, no endpoint, no address. */
    private void nothingLeft(String cid) {
        assertThat(h.caliLinks()).isEmpty();
        assertThat(h.store.list(ResourceKind.WORKLOAD_ENDPOINT).items())
                .noneMatch(w -> cid.equals(((calico.api.model.WorkloadEndpoint) w).spec().containerID()));
        assertThat(ipam.addressesByHandle("k8s-pod-network." + cid)).isEmpty();
    }

    private Map<String, String> add(String cid, NetNs pod, String name) {
        return CniHarness.env("ADD", cid, pod == null ? null : CniHarness.netns(pod), "ns1", name);
    }

    @Test
    void malformedConfiguration() {
        String cid = CniHarness.containerId();
        NetNs pod = h.pod();
        JsonNode e = error(h.call(add(cid, pod, "m"), "{\"cniVersion\":\"1.0.0\", nope"));
        assertThat(e.path("code").asInt()).isEqualTo(6);

        e = error(h.call(add(cid, pod, "m"), h.calicoConf("1.0.0", "10.203.0.0/24").replace("\"mtu\"", "\"mtuu\"")));
        assertThat(e.path("code").asInt()).isEqualTo(2);
        assertThat(e.path("msg").asText()).startsWith("mtuu:");

        e = error(h.call(add(cid, pod, "m"), h.calicoConf("1.0.0", "10.203.0.0/24").replace("1440", "\"big\"")));
        assertThat(e.path("code").asInt()).isEqualTo(7);
        assertThat(e.path("msg").asText()).startsWith("mtu:");

        e = error(h.call(add(cid, pod, "m"), h.calicoConf("1.0.0", "not-a-cidr")));
        assertThat(e.path("msg").asText()).startsWith("ipam.ipv4_pools:");

        e = error(h.call(add(cid, pod, "m"), h.calicoConf("9.9.9", "10.203.0.0/24")));
        assertThat(e.path("code").asInt()).isEqualTo(1);

        e = error(h.call(add(cid, pod, "m"), h.calicoConf("1.0.0", "10.203.0.0/24").replace("\"assign_ipv4\":\"true\"", "\"assign_ipv4\":\"yes\"")));
        assertThat(e.path("msg").asText()).startsWith("ipam.assign_ipv4:");
        nothingLeft(cid);
    }

    @Test
    void missingNetnsAndMissingNamespaceFile() {
        h.pool("b-netns", "10.203.1.0/24", 26);
        String cid = CniHarness.containerId();
        JsonNode e = error(h.call(add(cid, null, "n"), h.calicoConf("1.0.0", "10.203.1.0/24")));
        assertThat(e.path("code").asInt()).isEqualTo(4);
        assertThat(e.path("msg").asText()).startsWith("CNI_NETNS:");

        Map<String, String> env = CniHarness.env("ADD", cid, "/run/netns/" + CniHarness.PREFIX + "-absent", "ns1", "n");
        e = error(h.call(env, h.calicoConf("1.0.0", "10.203.1.0/24")));
        assertThat(e.path("code").asInt()).isEqualTo(3);
        nothingLeft(cid);
    }

    @Test
    void exhaustedPool() {
        h.pool("b-small", "10.203.2.0/30", 30);
        String conf = h.calicoConf("1.0.0", "10.203.2.0/30");
        int ok = 0;
        JsonNode e = null;
        String failed = null;
        for (int i = 0; i < 8 && e == null; i++) {
            String cid = CniHarness.containerId();
            CniResponse r = h.call(add(cid, h.pod(), "x" + i), conf);
            if (r.exitCode() == 0) {
                ok++;
            } else {
                e = h.parse(r);
                failed = cid;
            }
        }
        assertThat(e).as("the pool must run out").isNotNull();
        assertThat(ok).isBetween(1, 4);
        assertThat(e.path("code").asInt()).isEqualTo(100);
        assertThat(e.path("msg").asText()).contains("calico-ipam");
        assertThat(h.caliLinks()).hasSize(ok);
        assertThat(h.store.list(ResourceKind.WORKLOAD_ENDPOINT).items())
                .filteredOn(w -> ((calico.api.model.WorkloadEndpoint) w).spec().ipNetworks().get(0).startsWith("10.203.2.")).hasSize(ok);
        assertThat(ipam.addressesByHandle("k8s-pod-network." + failed)).isEmpty();
    }

    @Test
    void failingNetlinkStepRollsBackTheAddress() {
        h.pool("b-nl", "10.203.3.0/24", 26);
        NetNs pod = h.pod();
        pod.exec("ip", "link", "add", "eth0", "type", "veth", "peer", "name", "other0");
        String cid = CniHarness.containerId();
        JsonNode e = error(h.call(add(cid, pod, "clash"), h.calicoConf("1.0.0", "10.203.3.0/24")));
        assertThat(e.path("code").asInt()).isEqualTo(101);
        assertThat(e.path("msg").asText()).contains("already exists");
        nothingLeft(cid);
    }

    @Test
    void unreachableDatastore() {
        NetNs pod = h.pod();
        String cid = CniHarness.containerId();
        String conf = h.calicoConf("1.0.0", "10.203.4.0/24").replace(h.etcd.toString(), "http://127.0.0.1:1");
        JsonNode e = error(h.call(add(cid, pod, "u"), conf));
        assertThat(e.path("code").asInt()).isIn(11, 102);
        assertThat(e.path("msg").asText()).contains("datastore");
        nothingLeft(cid);
        // STATUS says the plugin cannot serve.
        JsonNode s = error(h.call(Map.of("CNI_COMMAND", "STATUS"), conf));
        assertThat(s.path("code").asInt()).isEqualTo(50);
    }

    @Test
    void unknownCommand() {
        JsonNode e = error(h.call(Map.of("CNI_COMMAND", "FROB"), h.calicoConf("1.0.0", "10.203.5.0/24")));
        assertThat(e.path("code").asInt()).isEqualTo(4);
        assertThat(e.path("msg").asText()).startsWith("CNI_COMMAND:");
    }
}
