package calico.felix.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.dataplane.testing.NetNs;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The probes the policy matrix relies on can fail: two namespaces on one veth, each protocol
 * dropped in turn by an iptables rule in the target namespace (the test's own), and a DROP of
 * only NEW flows after a successful exchange, which a probe re-using its flow (same UDP source
 * port, same ICMP id) would slip past as ESTABLISHED.
 */
class ProbesTest {

    private static final Duration TIMEOUT = Reachability.NEGATIVE;
    private static final String A = "10.71.0.1";
    private static final String B = "10.71.0.2";

    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    @Test
    void eachProbePassesUntilItsProtocolIsDropped() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        NetNs a = ns("prba");
        NetNs b = ns("prbb");
        a.veth("eth0", b, "eth0");
        a.exec("ip", "addr", "add", A + "/24", "dev", "eth0");
        b.exec("ip", "addr", "add", B + "/24", "dev", "eth0");
        open.add(b.tcpListener(B, 8080));
        open.add(b.udpEcho(B, 53));

        assertThat(a.tcpConnects(B, 8080, TIMEOUT)).as("tcp").isTrue();
        assertThat(a.udpEchoes(B, 53, TIMEOUT)).as("udp").isTrue();
        assertThat(a.pings(B, TIMEOUT)).as("icmp").isTrue();
        assertThat(a.tcpConnects(B, 8081, TIMEOUT)).as("tcp to a closed port").isFalse();
        assertThat(a.udpEchoes(B, 54, TIMEOUT)).as("udp to a closed port").isFalse();
        // Many probes in a row: the TCP listener keeps accepting (a full backlog would drop SYNs).
        for (int i = 0; i < 300; i++) {
            assertThat(a.tcpConnects(B, 8080, TIMEOUT)).as("tcp #" + i).isTrue();
        }

        for (String proto : List.of("tcp", "udp", "icmp")) {
            b.exec("iptables", "-I", "INPUT", "-p", proto, "-j", "DROP");
            assertThat(a.tcpConnects(B, 8080, TIMEOUT)).as("tcp with %s dropped", proto).isEqualTo(!proto.equals("tcp"));
            assertThat(a.udpEchoes(B, 53, TIMEOUT)).as("udp with %s dropped", proto).isEqualTo(!proto.equals("udp"));
            assertThat(a.pings(B, TIMEOUT)).as("icmp with %s dropped", proto).isEqualTo(!proto.equals("icmp"));
            b.exec("iptables", "-D", "INPUT", "-p", proto, "-j", "DROP");
        }

        // Established flows stay open, new ones are dropped: every probe is a new flow.
        b.exec("iptables", "-A", "INPUT", "-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "ACCEPT");
        b.exec("iptables", "-A", "INPUT", "-m", "conntrack", "--ctstate", "NEW", "-j", "DROP");
        assertThat(a.tcpConnects(B, 8080, TIMEOUT)).as("new tcp flow").isFalse();
        assertThat(a.udpEchoes(B, 53, TIMEOUT)).as("new udp flow").isFalse();
        assertThat(a.pings(B, TIMEOUT)).as("new icmp echo id").isFalse();
    }

    private NetNs ns(String prefix) {
        NetNs n = NetNs.create(prefix);
        open.add(n);
        return n;
    }
}
