package calico.cni;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.k8s.WorkloadEndpointNames;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.model.WorkloadEndpoint;
import calico.cni.spec.CniResponse;
import calico.dataplane.testing.NetNs;
import calico.libcalico.ipam.IpamClient;
import calico.libcalico.ipam.IpamOptions;
import calico.libcalico.testing.EtcdServerExtension;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** ADD, DEL, CHECK and VERSION with Calico IPAM on a real etcd, pods as real namespaces. */
class CniPluginTest {
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


    private WorkloadEndpoint wep(String ns, String pod) {
        return (WorkloadEndpoint) h.store.get(ResourceKey.of(ResourceKind.WORKLOAD_ENDPOINT, ns,
                WorkloadEndpointNames.forPod(CniHarness.NODE, pod))).orElse(null);
    }

    /**
     * Without {@code mtu} the pod gets the MTU felix wrote to the MTU file, read at each ADD (a
     * rewrite reaches the next pod); no file: 1500; {@code mtu} in the configuration wins; a file
     * holding no MTU is refused naming {@code mtu_file}, nothing created.
     */
    @Test
    void withoutMtuThePodGetsTheMtuFelixWrote(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        h.pool("p-mtu", "10.201.19.0/24", 26);
        java.nio.file.Path file = dir.resolve("mtu");
        String conf = h.calicoConf("1.0.0", "10.201.19.0/24").replace("\"mtu\":1440",
                "\"mtu_file\":\"" + file + "\"");
        java.util.function.IntFunction<String> podMtu = i -> {
            NetNs pod = h.pod();
            CniResponse r = h.call(CniHarness.env("ADD", CniHarness.containerId(), CniHarness.netns(pod), "ns1",
                    "mtu-" + i), conf);
            assertThat(r.exitCode()).as(r.stdout()).isZero();
            return pod.exec("ip", "-o", "link", "show", "eth0");
        };
        assertThat(podMtu.apply(0)).as("no file yet: Calico's default").contains("mtu 1500");
        java.nio.file.Files.writeString(file, "1410");
        assertThat(podMtu.apply(1)).contains("mtu 1410");
        java.nio.file.Files.writeString(file, "8950\n");
        assertThat(podMtu.apply(2)).as("rewritten: the next pod gets the new value").contains("mtu 8950");

        // "mtu": 0 is "not set" (Calico's manifests and our chart write it by default): the file decides.
        NetNs zero = h.pod();
        CniResponse z = h.call(CniHarness.env("ADD", CniHarness.containerId(), CniHarness.netns(zero), "ns1",
                "mtu-zero"), conf.replace("\"mtu_file\"", "\"mtu\":0,\"mtu_file\""));
        assertThat(z.exitCode()).as(z.stdout()).isZero();
        assertThat(zero.exec("ip", "-o", "link", "show", "eth0")).contains("mtu 8950");

        NetNs explicit = h.pod();
        CniResponse r = h.call(CniHarness.env("ADD", CniHarness.containerId(), CniHarness.netns(explicit), "ns1",
                "mtu-explicit"), conf.replace("\"mtu_file\"", "\"mtu\":1440,\"mtu_file\""));
        assertThat(r.exitCode()).as(r.stdout()).isZero();
        assertThat(explicit.exec("ip", "-o", "link", "show", "eth0")).as("the configuration's mtu wins")
                .contains("mtu 1440");

        java.nio.file.Files.writeString(file, "jumbo");
        NetNs bad = h.pod();
        JsonNode e = h.parse(h.call(CniHarness.env("ADD", CniHarness.containerId(), CniHarness.netns(bad), "ns1",
                "mtu-bad"), conf));
        assertThat(e.path("code").asInt()).isEqualTo(7);
        assertThat(e.path("msg").asText()).startsWith("mtu_file:").contains("'jumbo'");
        assertThat(bad.tryExec("ip", "link", "show", "eth0").status()).as("nothing created").isNotZero();
    }

    @Test
    void addNetworksThePodAndDelRemovesEverythingIdempotently() {
        h.pool("p-add", "10.201.1.0/24", 26);
        NetNs pod = h.pod();
        String cid = CniHarness.containerId();
        Map<String, String> env = CniHarness.env("ADD", cid, CniHarness.netns(pod), "ns1", "web-0");
        CniResponse r = h.call(env, h.calicoConf("1.0.0", "10.201.1.0/24"));
        assertThat(r.exitCode()).as(r.stdout()).isZero();
        JsonNode res = h.parse(r);
        String hostVeth = WorkloadEndpointNames.interfaceName("ns1", "web-0");
        assertThat(res.path("cniVersion").asText()).isEqualTo("1.0.0");
        assertThat(res.path("interfaces").get(0).path("name").asText()).isEqualTo(hostVeth);
        assertThat(res.path("interfaces").get(1).path("name").asText()).isEqualTo("eth0");
        assertThat(res.path("interfaces").get(1).path("sandbox").asText()).isEqualTo(CniHarness.netns(pod));
        String address = res.path("ips").get(0).path("address").asText();
        assertThat(address).startsWith("10.201.1.").endsWith("/32");
        assertThat(res.path("ips").get(0).has("version")).isFalse();
        String ip = address.replace("/32", "");

        // The kernel: pod side with the /32 and routes, host side with MAC, proxy_arp and the /32 route.
        assertThat(pod.exec("ip", "-o", "addr", "show", "eth0")).contains(address);
        assertThat(pod.exec("ip", "route")).contains("default via 169.254.1.1 dev eth0")
                .contains("169.254.1.1 dev eth0 scope link");
        assertThat(pod.exec("ip", "-o", "link", "show", "eth0")).contains("mtu 1440");
        assertThat(h.host.exec("ip", "-o", "link", "show", hostVeth)).contains("ee:ee:ee:ee:ee:ee").contains("UP");
        assertThat(h.host.exec("cat", "/proc/sys/net/ipv4/conf/" + hostVeth + "/proxy_arp").trim()).isEqualTo("1");
        assertThat(h.host.exec("ip", "route", "show", ip)).contains("dev " + hostVeth).contains("scope link");

        // The datastore: endpoint and IPAM handle.
        WorkloadEndpoint w = wep("ns1", "web-0");
        assertThat(w).isNotNull();
        assertThat(w.spec().interfaceName()).isEqualTo(hostVeth);
        assertThat(w.spec().ipNetworks()).containsExactly(address);
        assertThat(w.spec().profiles()).contains("kns.ns1");
        assertThat(w.spec().containerID()).isEqualTo(cid);
        assertThat(w.metadata().labels()).containsEntry("projectcalico.org/namespace", "ns1")
                .containsEntry("projectcalico.org/orchestrator", "k8s");
        assertThat(ipam.addressesByHandle("k8s-pod-network." + cid)).hasSize(1);

        env.put("CNI_COMMAND", "DEL");
        for (int i = 0; i < 2; i++) {
            CniResponse d = h.call(env, h.calicoConf("1.0.0", "10.201.1.0/24"));
            assertThat(d.exitCode()).as("DEL #" + i + ": " + d.stdout()).isZero();
            assertThat(d.stdout()).isEmpty();
        }
        assertThat(h.caliLinks()).isEmpty();
        assertThat(pod.tryExec("ip", "link", "show", "eth0").status()).isNotZero();
        assertThat(wep("ns1", "web-0")).isNull();
        assertThat(ipam.addressesByHandle("k8s-pod-network." + cid)).isEmpty();
    }

    @Test
    void delWorksWhenTheNetnsIsAlreadyGone() {
        h.pool("p-gone", "10.201.2.0/24", 26);
        NetNs pod = h.pod();
        String cid = CniHarness.containerId();
        Map<String, String> env = CniHarness.env("ADD", cid, CniHarness.netns(pod), "ns1", "gone-0");
        assertThat(h.call(env, h.calicoConf("0.4.0", "10.201.2.0/24")).exitCode()).isZero();
        // The veth survives its namespace only if the host end is kept: delete the namespace, then DEL.
        pod.close();
        CniResponse d = h.call(CniHarness.env("DEL", cid, CniHarness.netns(pod), "ns1", "gone-0"),
                h.calicoConf("0.4.0", "10.201.2.0/24"));
        assertThat(d.exitCode()).as(d.stdout()).isZero();
        assertThat(h.caliLinks()).isEmpty();
        assertThat(wep("ns1", "gone-0")).isNull();
        assertThat(ipam.addressesByHandle("k8s-pod-network." + cid)).isEmpty();
    }

    @Test
    void podsReachEachOtherThroughTheHostRoutes() {
        h.pool("p-ping", "10.201.3.0/24", 26);
        NetNs a = h.pod();
        NetNs b = h.pod();
        String conf = h.calicoConf("1.0.0", "10.201.3.0/24");
        String ipA = h.parse(h.call(CniHarness.env("ADD", CniHarness.containerId(), CniHarness.netns(a), "ns1", "a"), conf))
                .path("ips").get(0).path("address").asText().replace("/32", "");
        String ipB = h.parse(h.call(CniHarness.env("ADD", CniHarness.containerId(), CniHarness.netns(b), "ns1", "b"), conf))
                .path("ips").get(0).path("address").asText().replace("/32", "");
        assertThat(a.pings(ipB, java.time.Duration.ofSeconds(5))).as("ping a -> b").isTrue();
        try (NetNs.Listener l = b.tcpListener(ipB, 8080)) {
            assertThat(a.tcpConnects(ipB, 8080, java.time.Duration.ofSeconds(5))).as("TCP a -> b:8080").isTrue();
        }
        assertThat(b.pings(ipA, java.time.Duration.ofSeconds(5))).as("ping b -> a").isTrue();
        // The host's route to each pod is what carries the traffic: without it, no answer.
        h.host.exec("ip", "route", "del", ipB);
        assertThat(a.pings(ipB, java.time.Duration.ofSeconds(2))).as("ping a -> b without the host route").isFalse();
    }

    @Test
    void parallelAddsNeverCollide() throws Exception {
        h.pool("p-par", "10.201.4.0/24", 28);
        int n = 12;
        ExecutorService exec = Executors.newFixedThreadPool(6);
        try {
            List<Future<CniResponse>> futures = new ArrayList<>();
            String conf = h.calicoConf("1.0.0", "10.201.4.0/24");
            for (int i = 0; i < n; i++) {
                NetNs pod = h.pod();
                String name = "par-" + i;
                futures.add(exec.submit(() -> h.call(CniHarness.env("ADD", CniHarness.containerId(), CniHarness.netns(pod),
                        "ns1", name), conf)));
            }
            Set<String> ips = new HashSet<>();
            for (Future<CniResponse> f : futures) {
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
    void secondAddForTheSameContainerReturnsTheSameResultAndANewSandboxReplacesTheOld() {
        h.pool("p-twice", "10.201.5.0/24", 26);
        NetNs pod = h.pod();
        String cid = CniHarness.containerId();
        String conf = h.calicoConf("1.0.0", "10.201.5.0/24");
        Map<String, String> env = CniHarness.env("ADD", cid, CniHarness.netns(pod), "ns1", "twice");
        CniResponse first = h.call(env, conf);
        CniResponse second = h.call(env, conf);
        assertThat(second.exitCode()).as(second.stdout()).isZero();
        assertThat(h.parse(second).path("ips")).isEqualTo(h.parse(first).path("ips"));
        assertThat(ipam.addressesByHandle("k8s-pod-network." + cid)).hasSize(1);

        // The pod's sandbox is recreated: a new container ID for the same pod.
        NetNs pod2 = h.pod();
        String cid2 = CniHarness.containerId();
        CniResponse third = h.call(CniHarness.env("ADD", cid2, CniHarness.netns(pod2), "ns1", "twice"), conf);
        assertThat(third.exitCode()).as(third.stdout()).isZero();
        assertThat(wep("ns1", "twice").spec().containerID()).isEqualTo(cid2);
        // The old container's DEL frees its address but leaves the new container's endpoint alone.
        CniResponse delOld = h.call(CniHarness.env("DEL", cid, CniHarness.netns(pod), "ns1", "twice"), conf);
        assertThat(delOld.exitCode()).as(delOld.stdout()).isZero();
        assertThat(ipam.addressesByHandle("k8s-pod-network." + cid)).isEmpty();
        assertThat(wep("ns1", "twice").spec().containerID()).isEqualTo(cid2);
        assertThat(h.caliLinks()).containsExactly(WorkloadEndpointNames.interfaceName("ns1", "twice"));
        assertThat(pod2.exec("ip", "-o", "addr", "show", "eth0")).contains(h.parse(third).path("ips").get(0).path("address").asText());
    }

    @Test
    void checkPassesThenDetectsARemovedRoute() {
        h.pool("p-check", "10.201.6.0/24", 26);
        NetNs pod = h.pod();
        String cid = CniHarness.containerId();
        String conf = h.calicoConf("1.0.0", "10.201.6.0/24");
        CniResponse add = h.call(CniHarness.env("ADD", cid, CniHarness.netns(pod), "ns1", "chk"), conf);
        String withPrev = conf.substring(0, conf.lastIndexOf('}')) + ",\"prevResult\":" + add.stdout() + "}";
        Map<String, String> check = CniHarness.env("CHECK", cid, CniHarness.netns(pod), "ns1", "chk");
        CniResponse ok = h.call(check, withPrev);
        assertThat(ok.exitCode()).as(ok.stdout()).isZero();

        pod.exec("ip", "route", "del", "default");
        CniResponse bad = h.call(check, withPrev);
        assertThat(bad.exitCode()).isNotZero();
        JsonNode err = h.parse(bad);
        assertThat(err.path("code").asInt()).isEqualTo(103);
        assertThat(err.path("msg").asText()).contains("default route via 169.254.1.1");

        CniResponse noPrev = h.call(check, conf);
        assertThat(h.parse(noPrev).path("code").asInt()).isEqualTo(7);
        assertThat(h.parse(noPrev).path("msg").asText()).contains("prevResult");
    }

    @Test
    void versionListsTheSupportedVersions() {
        CniResponse r = h.call(Map.of("CNI_COMMAND", "VERSION"), "{\"cniVersion\":\"0.4.0\"}");
        assertThat(r.exitCode()).isZero();
        JsonNode v = h.parse(r);
        assertThat(v.path("cniVersion").asText()).isEqualTo("0.4.0");
        assertThat(v.path("supportedVersions").toString()).contains("0.3.1", "0.4.0", "1.0.0");
    }

    @Test
    void resultIn040CarriesIpVersions() {
        h.pool("p-040", "10.201.7.0/24", 26);
        NetNs pod = h.pod();
        CniResponse r = h.call(CniHarness.env("ADD", CniHarness.containerId(), CniHarness.netns(pod), "ns1", "old"),
                h.calicoConf("0.4.0", "10.201.7.0/24"));
        JsonNode res = h.parse(r);
        assertThat(res.path("cniVersion").asText()).isEqualTo("0.4.0");
        assertThat(res.path("ips").get(0).path("version").asText()).isEqualTo("4");
        assertThat(res.path("ips").get(0).path("interface").asInt()).isEqualTo(1);
    }

    @Test
    void dualStackGivesBothFamiliesWithTheLinkLocalGateway() {
        h.pool("p-v4", "10.201.8.0/24", 26);
        h.pool("p-v6", "fd00:cafe::/120", 122);
        NetNs a = h.pod();
        String conf = h.calicoConf("1.0.0", "10.201.8.0/24")
                .replace("\"assign_ipv4\":\"true\"", "\"assign_ipv4\":\"true\",\"assign_ipv6\":\"true\",\"ipv6_pools\":[\"fd00:cafe::/120\"]");
        String cid = CniHarness.containerId();
        CniResponse r = h.call(CniHarness.env("ADD", cid, CniHarness.netns(a), "ns1", "dual"), conf);
        assertThat(r.exitCode()).as(r.stdout()).isZero();
        JsonNode ips = h.parse(r).path("ips");
        assertThat(ips).hasSize(2);
        String v6 = ips.get(1).path("address").asText();
        assertThat(v6).startsWith("fd00:cafe::").endsWith("/128");
        assertThat(a.exec("ip", "-6", "-o", "addr", "show", "eth0")).contains(v6);
        assertThat(a.exec("ip", "-6", "route")).contains("default via fe80::ecee:eeff:feee:eeee dev eth0");
        assertThat(h.host.exec("ip", "-6", "route", "show", v6.replace("/128", ""))).contains("dev "
                + WorkloadEndpointNames.interfaceName("ns1", "dual"));
        assertThat(wep("ns1", "dual").spec().ipNetworks()).hasSize(2);
        CniResponse d = h.call(CniHarness.env("DEL", cid, CniHarness.netns(a), "ns1", "dual"), conf);
        assertThat(d.exitCode()).as(d.stdout()).isZero();
        assertThat(ipam.addressesByHandle("k8s-pod-network." + cid)).isEmpty();
    }

    @Test
    void ipv6PodsReachEachOtherThroughTheHostViaTheLinkLocalGateway() {
        h.pool("p6-v4", "10.201.9.0/24", 26);
        h.pool("p6-v6", "fd00:beef::/120", 122);
        String conf = h.calicoConf("1.0.0", "10.201.9.0/24")
                .replace("\"assign_ipv4\":\"true\"", "\"assign_ipv4\":\"true\",\"assign_ipv6\":\"true\",\"ipv6_pools\":[\"fd00:beef::/120\"]");
        NetNs a = h.pod();
        NetNs b = h.pod();
        String v6a = v6Of(h.call(CniHarness.env("ADD", CniHarness.containerId(), CniHarness.netns(a), "ns1", "six-a"), conf));
        String v6b = v6Of(h.call(CniHarness.env("ADD", CniHarness.containerId(), CniHarness.netns(b), "ns1", "six-b"), conf));
        // Each pod's IPv6 default route goes to the host end's link-local address, as Calico's does.
        assertThat(a.exec("ip", "-6", "route")).contains("default via fe80::ecee:eeff:feee:eeee dev eth0");
        assertThat(h.host.exec("ip", "-6", "-o", "addr", "show", WorkloadEndpointNames.interfaceName("ns1", "six-a")))
                .contains("fe80::ecee:eeff:feee:eeee/64");
        // Real IPv6 traffic both ways, forwarded by the host namespace (no felix here: no policy).
        try (NetNs.Listener l = b.tcpListener(v6b, 8080)) {
            assertThat(a.tcpConnects(v6b, 8080, java.time.Duration.ofSeconds(5))).as("TCP [a] -> [b]:8080").isTrue();
        }
        try (NetNs.Listener l = a.tcpListener(v6a, 8081)) {
            assertThat(b.tcpConnects(v6a, 8081, java.time.Duration.ofSeconds(5))).as("TCP [b] -> [a]:8081").isTrue();
        }
        // The host's /128 route carries it: without it, no connection.
        h.host.exec("ip", "-6", "route", "del", v6b + "/128");
        try (NetNs.Listener l = b.tcpListener(v6b, 8082)) {
            assertThat(a.tcpConnects(v6b, 8082, java.time.Duration.ofSeconds(2))).as("TCP [a] -> [b] without the host route")
                    .isFalse();
        }
    }

    private String v6Of(CniResponse r) {
        assertThat(r.exitCode()).as(r.stdout()).isZero();
        JsonNode ips = h.parse(r).path("ips");
        assertThat(ips).hasSize(2);
        String v6 = ips.get(1).path("address").asText();
        assertThat(v6).endsWith("/128");
        return v6.replace("/128", "");
    }
}
