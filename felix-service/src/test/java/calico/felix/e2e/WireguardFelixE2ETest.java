package calico.felix.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.api.codec.ResourceCodec;
import calico.api.model.FelixConfiguration;
import calico.api.model.FelixConfigurationSpec;
import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.Node;
import calico.api.model.NodeSpec;
import calico.api.model.NodeStatus;
import calico.api.model.ObjectMeta;
import calico.api.model.Profile;
import calico.api.model.ProfileSpec;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.model.Rule;
import calico.api.model.WorkloadEndpoint;
import calico.api.model.WorkloadEndpointSpec;
import calico.dataplane.testing.NetNs;
import calico.dataplane.wireguard.UserspaceWireguard;
import calico.felix.dataplane.wireguard.WireguardHost;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.EtcdServerExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The whole felix, twice, on one etcd: two node namespaces on a veth underlay, a pod on each,
 * FelixConfiguration {@code wireguardEnabled: true}. Each felix makes its device (wireguard-go),
 * publishes its public key into its own Node's status in etcd, reads the other's from the
 * watch, and peers with it: pod to pod then crosses the tunnel. Nothing but felix writes the keys.
 */
class WireguardFelixE2ETest {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    private final List<NetNs> namespaces = new ArrayList<>();
    private final List<FelixProcess> felixes = new ArrayList<>();

    private NetNs ns(String prefix) {
        NetNs n = NetNs.create(prefix);
        namespaces.add(n);
        return n;
    }

    @AfterEach
    void cleanUp() throws Exception {
        felixes.forEach(FelixProcess::close);
        for (NetNs n : namespaces) {
            // The device first: a wireguard-go daemon keeps its namespace alive after `ip netns delete`.
            n.tryExec("ip", "link", "del", "wireguard.cali");
            n.close();
            Path dir = WireguardHost.socketDirFor(n.name());
            if (Files.exists(dir)) {
                try (var files = Files.walk(dir)) {
                    files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                }
            }
        }
    }

    static Node node(String name, String ip, String wgAddr) {
        return new Node(ObjectMeta.named(name), new NodeSpec(new NodeSpec.BGP(null, ip + "/24", null, null, null), null,
                null, null, null, null, new NodeSpec.Wireguard(wgAddr, null), null, null));
    }

    /** Named as Calico names it ({@code <node>-k8s-<pod>-eth0}): the datastore checks. */
    static WorkloadEndpoint wep(String pod, String node, String ip, String iface) {
        return new WorkloadEndpoint(ObjectMeta.namespaced("test", node + "-k8s-" + pod + "-eth0"),
                new WorkloadEndpointSpec("k8s", null, node, null, pod, "eth0", null, List.of(ip + "/32"), null,
                        null, null, List.of("kns.test"), iface, "ee:ee:ee:ee:ee:ee", List.of(), null));
    }

    private NetNs pod(NetNs node, String hostIf, String ip) {
        NetNs pod = ns("wg-epod");
        node.veth(hostIf, pod, "eth0");
        pod.exec("ip", "addr", "add", ip + "/32", "dev", "eth0");
        pod.exec("ip", "route", "add", "default", "via", "169.254.1.1", "dev", "eth0", "onlink");
        return pod;
    }

    private static Optional<String> publishedKey(Datastore store, String node) {
        return store.get(ResourceKey.of(ResourceKind.NODE, node)).map(Node.class::cast).map(Node::status)
                .map(NodeStatus::wireguardPublicKey);
    }

    @Test
    void twoFelixesPublishTheirKeysAndPeerThroughTheDatastore() {
        assumeTrue(UserspaceWireguard.installed(), "wireguard-go is not installed (scripts/lib/install-deps.sh)");
        NetNs na = ns("wg-ena");
        NetNs nb = ns("wg-enb");
        na.veth("eth1", nb, "eth1");
        na.exec("ip", "addr", "add", "10.98.0.1/24", "dev", "eth1");
        nb.exec("ip", "addr", "add", "10.98.0.2/24", "dev", "eth1");
        na.exec("ip", "route", "add", "default", "dev", "eth1");
        nb.exec("ip", "route", "add", "default", "dev", "eth1");
        NetNs podA = pod(na, "calipoda", "10.245.0.5");
        NetNs podB = pod(nb, "calipodb", "10.245.1.5");

        TestDatastore.Etcd etcd = new TestDatastore.Etcd(ETCD);
        etcd.reset();
        try (Datastore store = etcd.open()) {
            Writes.clusterReady(store);
            FelixConfigurationSpec spec = ResourceCodec.get().jsonMapper()
                    .convertValue(Map.of("wireguardEnabled", true), FelixConfigurationSpec.class);
            store.create(new FelixConfiguration(ObjectMeta.named("default"), spec));
            store.create(new IPPool(ObjectMeta.named("pool"), IPPoolSpec.ofCidr("10.245.0.0/16")));
            store.create(new Profile(ObjectMeta.named("kns.test"),
                    new ProfileSpec(List.of(Rule.allow()), List.of(Rule.allow()), Map.of())));
            store.create(node("nodea", "10.98.0.1", "10.245.0.1"));
            store.create(node("nodeb", "10.98.0.2", "10.245.1.1"));
            store.create(wep("poda", "nodea", "10.245.0.5", "calipoda"));
            store.create(wep("podb", "nodeb", "10.245.1.5", "calipodb"));

            felixes.add(new FelixProcess("nodea", etcd.felixArgs(), na.name(), Backend.NFTABLES, "info"));
            felixes.add(new FelixProcess("nodeb", etcd.felixArgs(), nb.name(), Backend.NFTABLES, "info"));
            felixes.forEach(f -> f.awaitReady(Duration.ofSeconds(60)));

            String keyA = Await.value("nodea's key in etcd", Duration.ofSeconds(30), () -> publishedKey(store, "nodea"));
            String keyB = Await.value("nodeb's key in etcd", Duration.ofSeconds(30), () -> publishedKey(store, "nodeb"));
            assertThat(keyA).hasSize(44).isNotEqualTo(keyB);

            assertThat(Await.within(Duration.ofSeconds(30), () -> podA.pings("10.245.1.5", Duration.ofSeconds(1))))
                    .as("pod A reaches pod B through WireGuard").isTrue();
            assertThat(na.exec("ip", "route", "show", "table", "1")).contains("10.245.1.5 dev wireguard.cali");
            assertThat(podB.pings("10.245.0.5", Duration.ofSeconds(5))).isTrue();
        }
    }
}
