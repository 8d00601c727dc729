package calico.felix.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.api.codec.ResourceCodec;
import calico.api.model.EncapsulationMode;
import calico.api.model.FelixConfiguration;
import calico.api.model.FelixConfigurationSpec;
import calico.api.model.Node;
import calico.api.model.NodeStatus;
import calico.api.model.ObjectMeta;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.dataplane.wireguard.UserspaceWireguard;
import calico.felix.e2e.MultiNodeCluster.ClusterNode;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.KubeControlPlaneExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Routes between nodes on the kubernetes datastore: a real kube-apiserver with Calico's CRDs; the
 * nodes are Kubernetes Nodes carrying Calico's fields in their {@code projectcalico.org/*}
 * annotations, the IPAM blocks and the pool custom resources, the pods real Pods. Here also
 * dual-stack WireGuard, whose keys travel as those annotations.
 */
class KddMultiNodeRoutesTest extends MultiNodeRoutes {

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutControllers();

    private static final Duration WAIT = Duration.ofSeconds(30);

    KddMultiNodeRoutesTest() {
        super(new TestDatastore.Kubernetes(KUBE));
    }

    private static Optional<NodeStatus> status(MultiNodeCluster c, ClusterNode n) {
        return c.store().get(ResourceKey.of(ResourceKind.NODE, n.name())).map(Node.class::cast).map(Node::status);
    }

    /** The packet counts of a listing's counters, in rule order. */
    private static List<Long> counters(String listing) {
        Matcher m = Pattern.compile("counter packets (\\d+)").matcher(listing);
        List<Long> out = new ArrayList<>();
        while (m.find()) {
            out.add(Long.parseLong(m.group(1)));
        }
        return out;
    }

    /**
     * {@code wireguardEnabled} and {@code wireguardEnabledV6} on a dual-stack cluster without
     * encapsulation (no BIRD here: only WireGuard's tables route between the nodes): each felix
     * publishes two keys (the Node's {@code WireguardPublicKey} and {@code WireguardPublicKeyV6}
     * annotations), peers on {@code wg-v6.cali} at the other node's IPv6 address, port 51821, with
     * routes in table 2 and the IPv6 rule; pod to pod over IPv6 leaves node A only as UDP to 51821
     * (no TCP on the underlay), and a NetworkPolicy still decides who gets in.
     */
    @Test
    void dualStackWireguardEncryptsIpv6PodTrafficAndIpv6PolicyHolds() {
        assumeTrue(UserspaceWireguard.installed(), "wireguard-go is not installed (scripts/lib/install-deps.sh)");
        try (MultiNodeCluster c = new MultiNodeCluster(new TestDatastore.Kubernetes(KUBE), Backend.NFTABLES, true, "wg-")) {
            FelixConfigurationSpec spec = ResourceCodec.get().jsonMapper().convertValue(
                    Map.of("wireguardEnabled", true, "wireguardEnabledV6", true, "ipv6Support", true),
                    FelixConfigurationSpec.class);
            Writes.upsert(c.store(), new FelixConfiguration(ObjectMeta.named("default"), spec));
            try {
                c.pool(EncapsulationMode.Never, EncapsulationMode.Never);
                ClusterNode a = c.addNode("wg-node-a", 1, 0);
                ClusterNode b = c.addNode("wg-node-b", 2, 0);
                a.netns().exec("nft", "add table inet wgcount; add chain inet wgcount out { type filter hook postrouting "
                        + "priority 0; }; add rule inet wgcount out oifname eth0 meta nfproto ipv6 udp dport 51821 counter; "
                        + "add rule inet wgcount out oifname eth0 meta l4proto tcp counter");
                c.startFelix(a);
                c.startFelix(b);
                NodeStatus sa = Await.value("A's two keys", WAIT, () -> status(c, a)
                        .filter(s -> s.wireguardPublicKey() != null && s.wireguardPublicKeyV6() != null));
                NodeStatus sb = Await.value("B's two keys", WAIT, () -> status(c, b)
                        .filter(s -> s.wireguardPublicKey() != null && s.wireguardPublicKeyV6() != null));
                assertThat(List.of(sa.wireguardPublicKey(), sa.wireguardPublicKeyV6(), sb.wireguardPublicKey(),
                        sb.wireguardPublicKeyV6())).doesNotHaveDuplicates();
                Await.until("pod MTU file on A", WAIT, () -> c.podMtu(a).isPresent());
                assertThat(c.podMtu(a).getAsInt()).as("the smaller of wireguard.cali (1500 - 60) and wg-v6.cali (1500 - 80)")
                        .isEqualTo(1420);
                Workload pa = c.pod(a, "wg-dual", "pa");
                Workload pc = c.pod(a, "wg-dual", "pc");
                Workload pb = c.pod(b, "wg-dual", "pb");

                Await.until("pa -> pb over IPv6", WAIT, () -> tcp6(c, pa, pb));
                Await.until("pb -> pa over IPv6", WAIT, () -> tcp6(c, pb, pa));
                assertThat(a.netns().exec("ip", "-6", "rule", "show"))
                        .contains("99:\tnot from all fwmark 0x100000/0x100000 lookup 2");
                // B's pod is reached through wg-v6.cali in table 2 (the rule above sends unmarked traffic there):
                // by its own route or its block's, whichever felix has programmed (both go through the tunnel).
                assertThat(a.netns().exec("ip", "-6", "route", "get", c.ipv6(pb)))
                        .contains("dev wg-v6.cali").contains("table 2");
                assertThat(a.netns().exec("ip", "-d", "link", "show", "wg-v6.cali")).contains("mtu 1420");
                assertThat(a.netns().exec("ip", "rule", "show")).contains("99:\tnot from all fwmark 0x100000/0x100000 lookup 1");

                List<Long> counts = counters(a.netns().exec("nft", "list table inet wgcount"));
                assertThat(counts.get(0)).as("IPv6 UDP to 51821 on A's underlay").isPositive();
                assertThat(counts.get(1)).as("TCP in clear on A's underlay").isZero();

                // Policy holds through the tunnel: pb admits pa only, so pc (same node as pa) is refused.
                ipv6PolicyAdmitsOnly(c, "wg-dual", pa, pc, pb);
                assertThat(counters(a.netns().exec("nft", "list table inet wgcount")).get(1))
                        .as("TCP in clear on A's underlay").isZero();
            } finally {
                c.store().delete(ResourceKey.of(ResourceKind.FELIX_CONFIGURATION, "default"), null);
            }
        }
    }
}
