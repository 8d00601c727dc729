package calico.felix.dataplane;

import static calico.felix.dataplane.KernelTestbed.allowAllProfile;
import static calico.felix.dataplane.KernelTestbed.felixConfig;
import static calico.felix.dataplane.KernelTestbed.tier;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.api.model.ObjectMeta;
import calico.api.model.WorkloadEndpoint;
import calico.api.model.WorkloadEndpointSpec;
import calico.dataplane.testing.NetNs;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Floating IPs with real packets: workload b's {@code ipNATs} maps 10.99.0.2 to its 10.65.0.2.
 * With FelixConfiguration {@code floatingIPs: Disabled} (Calico's default) a connection from a to
 * the floating IP goes nowhere; Enabled, cali-fip-dnat sends it to b, and b reaching its own
 * floating IP (a hairpin) works through cali-fip-snat; Disabled again, the chains are gone.
 * On nftables and on iptables (nft backend).
 */
class FloatingIpKernelTest {

    private static final String A_IP = "10.65.0.1";
    private static final String B_IP = "10.65.0.2";
    private static final String B_FLOATING = "10.99.0.2";
    private static final String A_IF = "califipa0001";
    private static final String B_IF = "califipb0001";
    private static final Duration YES = Duration.ofSeconds(3);
    private static final Duration NO = Duration.ofSeconds(1);

    @Test
    void nftables() {
        run("Enabled");
    }

    @Test
    void iptables() {
        run("Disabled");
    }

    private void run(String nftablesMode) {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        try (KernelTestbed bed = new KernelTestbed("fip")) {
            NetNs a = bed.workload("fip-a", A_IF, A_IP);
            NetNs b = bed.workload("fip-b", B_IF, B_IP);
            bed.dataplane = new KernelDataplane(bed.host.name());
            scenario(bed, a, b, nftablesMode);
        }
    }

    private static void scenario(KernelTestbed bed, NetNs a, NetNs b, String nftablesMode) {
        try (NetNs.Listener b8080 = b.tcpListener(B_IP, 8080)) {
            bed.put(felixConfig(Map.of("nftablesMode", nftablesMode)), tier("default", 1000.0),
                    allowAllProfile("kns.test"), KernelTestbed.wep("a", A_IP, A_IF, "a"), withFloatingIp());
            bed.inSync();
            assertThat(bed.dataplane.errors()).isEmpty();
            assertThat(a.tcpConnects(B_IP, 8080, YES)).as("a->b by its own address").isTrue();
            assertThat(a.tcpConnects(B_FLOATING, 8080, NO)).as("floatingIPs Disabled: no DNAT").isFalse();
            assertThat(natListing(bed)).doesNotContain("cali-fip-dnat");

            bed.put(felixConfig(Map.of("nftablesMode", nftablesMode, "floatingIPs", "Enabled")));
            assertThat(bed.dataplane.errors()).isEmpty();
            assertThat(natListing(bed)).contains("cali-fip-dnat").contains("cali-fip-snat");
            assertThat(a.tcpConnects(B_FLOATING, 8080, YES)).as("floating IP DNAT'd to b").isTrue();
            assertThat(b.tcpConnects(B_FLOATING, 8080, YES)).as("b to its own floating IP (SNAT hairpin)").isTrue();

            bed.put(felixConfig(Map.of("nftablesMode", nftablesMode, "floatingIPs", "Disabled")));
            assertThat(bed.dataplane.errors()).isEmpty();
            assertThat(a.tcpConnects(B_FLOATING, 8080, NO)).as("Disabled again").isFalse();
            assertThat(natListing(bed)).doesNotContain("cali-fip-dnat");
            assertThat(a.tcpConnects(B_IP, 8080, YES)).as("a->b still").isTrue();
        }
    }

    /** b with {@code ipNATs: [{internalIP: 10.65.0.2, externalIP: 10.99.0.2}]}. */
    private static WorkloadEndpoint withFloatingIp() {
        WorkloadEndpoint w = KernelTestbed.wep("b", B_IP, B_IF, "b");
        WorkloadEndpointSpec s = w.spec();
        return new WorkloadEndpoint(ObjectMeta.namespaced("test", "b").withLabels(Map.of("app", "b")),
                new WorkloadEndpointSpec(s.orchestrator(), s.workload(), s.node(), s.containerID(), s.pod(),
                        s.endpoint(), s.serviceAccountName(), s.ipNetworks(),
                        List.of(new WorkloadEndpointSpec.IpNat(B_IP, B_FLOATING)), s.ipv4Gateway(), s.ipv6Gateway(),
                        s.profiles(), s.interfaceName(), s.mac(), s.ports(), s.allowSpoofedSourcePrefixes()));
    }

    /** The host's nat rules as either backend shows them. */
    private static String natListing(KernelTestbed bed) {
        return bed.host.exec("nft", "list", "ruleset");
    }
}
