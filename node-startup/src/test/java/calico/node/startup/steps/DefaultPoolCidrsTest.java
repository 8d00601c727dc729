package calico.node.startup.steps;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class DefaultPoolCidrsTest {

    private static final Cidr ULA = Cidr.parse("fd12:3456:789a::/48");
    private static final String CLUSTER_CONFIGURATION = """
            apiVersion: kubeadm.k8s.io/v1beta4
            kind: ClusterConfiguration
            networking:
              dnsDomain: cluster.local
              podSubnet: %s
              serviceSubnet: 10.96.0.0/12
            """;

    private static List<IpAddress> host(String... addresses) {
        return java.util.Arrays.stream(addresses).map(IpAddress::parse).toList();
    }

    @Test
    void theFirstPrivateRangeHoldingNoHostAddressIsChosen() {
        assertThat(DefaultPoolCidrs.freeIpv4(host("10.0.0.5", "127.0.0.1"))).isEqualTo(Cidr.parse("192.168.0.0/16"));
        assertThat(DefaultPoolCidrs.freeIpv4(host("192.168.1.20"))).isEqualTo(Cidr.parse("172.16.0.0/16"));
        // docker0's 172.17.0.1 rules out 172.17 too; 172.16 is taken by another interface.
        assertThat(DefaultPoolCidrs.freeIpv4(host("192.168.1.20", "172.16.4.4", "172.17.0.1")))
                .isEqualTo(Cidr.parse("172.18.0.0/16"));
    }

    @Test
    void whenEveryRangeHoldsAHostAddressThePreferredOneStays() {
        List<IpAddress> everywhere = new java.util.ArrayList<>(host("192.168.0.1"));
        for (int i = 16; i <= 31; i++) {
            everywhere.add(IpAddress.parse("172." + i + ".9.9"));
        }
        assertThat(DefaultPoolCidrs.freeIpv4(everywhere)).isEqualTo(Cidr.parse("192.168.0.0/16"));
    }

    @Test
    void kubeadmsPodSubnetComesFirstForEachVersion() {
        Map<String, String> dual = Map.of("ClusterConfiguration", CLUSTER_CONFIGURATION.formatted("10.217.0.0/16,fd00:10:217::/56"));
        DefaultPoolCidrs cidrs = new DefaultPoolCidrs(() -> Optional.of(dual), () -> host("10.217.0.1"), () -> ULA);
        assertThat(cidrs.ipv4()).isEqualTo(Cidr.parse("10.217.0.0/16"));
        assertThat(cidrs.ipv6()).isEqualTo(Cidr.parse("fd00:10:217::/56"));

        Map<String, String> v6First = Map.of("ClusterConfiguration", CLUSTER_CONFIGURATION.formatted("fd00:1::/64, 10.5.0.0/16"));
        assertThat(DefaultPoolCidrs.podSubnets(v6First)).isEqualTo(new DefaultPoolCidrs.PodSubnets(
                Optional.of(Cidr.parse("10.5.0.0/16")), Optional.of(Cidr.parse("fd00:1::/64"))));
    }

    @Test
    void withoutKubeadmsSubnetTheHostDecidesIpv4AndIpv6IsARandomUla() {
        Map<String, String> v4Only = Map.of("ClusterConfiguration", CLUSTER_CONFIGURATION.formatted("10.244.0.0/16"));
        DefaultPoolCidrs cidrs = new DefaultPoolCidrs(() -> Optional.of(v4Only), () -> host("192.168.3.3"), () -> ULA);
        assertThat(cidrs.ipv6()).isEqualTo(ULA);
        DefaultPoolCidrs noKubeadm = new DefaultPoolCidrs(KubeadmConfig.NONE, () -> host("192.168.3.3"), () -> ULA);
        assertThat(noKubeadm.ipv4()).isEqualTo(Cidr.parse("172.16.0.0/16"));
        assertThat(noKubeadm.ipv6()).isEqualTo(ULA);
    }

    @Test
    void aBadCidrEndsTheListAndAMapWithoutPodSubnetSaysNothing() {
        assertThat(DefaultPoolCidrs.podSubnets(Map.of("c", CLUSTER_CONFIGURATION.formatted("10.1.0.0/16,not-a-cidr,fd00::/64"))))
                .isEqualTo(new DefaultPoolCidrs.PodSubnets(Optional.of(Cidr.parse("10.1.0.0/16")), Optional.empty()));
        assertThat(DefaultPoolCidrs.podSubnets(Map.of("c", "networking:\n  serviceSubnet: 10.96.0.0/12\n")))
                .isEqualTo(DefaultPoolCidrs.PodSubnets.NONE);
    }

    @Test
    void kubeadmIsReadOnceAndOnlyWhenAPoolIsMade() {
        AtomicInteger reads = new AtomicInteger();
        DefaultPoolCidrs cidrs = new DefaultPoolCidrs(() -> {
            reads.incrementAndGet();
            return Optional.empty();
        }, () -> host(), () -> ULA);
        assertThat(reads).hasValue(0);
        cidrs.ipv4();
        cidrs.ipv6();
        assertThat(reads).hasValue(1);
    }
}
