package calico.dataplane.iptables;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.dataplane.testing.NetNs;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Real packets: a client namespace and a server namespace joined by a veth; a restore into the
 * server's INPUT drops one port and the client's TCP connect to it times out while a neighbouring
 * port still answers. Traffic only between the test's own namespaces.
 */
class IptablesPacketTest {

    private static final java.time.Duration CONNECT_TIMEOUT = java.time.Duration.ofMillis(500);

    private NetNs client;
    private NetNs server;

    @BeforeEach
    void setUp() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        client = NetNs.create("iptc");
        server = NetNs.create("ipts");
        client.veth("c0", server, "s0");
        client.exec("ip", "addr", "add", "10.99.0.1/24", "dev", "c0");
        server.exec("ip", "addr", "add", "10.99.0.2/24", "dev", "s0");
    }

    @AfterEach
    void tearDown() {
        if (client != null) {
            client.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @ParameterizedTest
    @EnumSource(IptablesBackend.class)
    void aDropRuleBlocksItsPortUntilDeleted(IptablesBackend backend) throws IOException {
        assumeTrue(IptablesRestoreKernelTest.installed(backend.restoreBinary(IpVersion.V4)));
        IptablesRestore r = new IptablesRestore(backend, XtablesLockSettings.defaults(),
                List.of("ip", "netns", "exec", server.name()));
        InetAddress serverIp = InetAddress.getByName("10.99.0.2");
        try (ServerSocket blocked = server.call(() -> new ServerSocket(8080, 50, serverIp));
                ServerSocket open = server.call(() -> new ServerSocket(8081, 50, serverIp))) {
            assertThat(client.tcpConnects("10.99.0.2", 8080, CONNECT_TIMEOUT)).isTrue();

            r.apply(IpVersion.V4, RestoreTransaction.forTable(Table.FILTER)
                    .declareChain("cali-INPUT")
                    .appendRule("cali-INPUT", Rule.of("-p", "tcp", "--dport", "8080", "-j", "DROP").withComment("cali:test"))
                    .insertRule("INPUT", Rule.of("-j", "cali-INPUT")));
            assertThat(client.tcpConnects("10.99.0.2", 8080, CONNECT_TIMEOUT)).isFalse();
            assertThat(client.tcpConnects("10.99.0.2", 8081, CONNECT_TIMEOUT)).isTrue();

            r.apply(IpVersion.V4, RestoreTransaction.forTable(Table.FILTER)
                    .deleteRule("INPUT", Rule.of("-j", "cali-INPUT"))
                    .deleteChain("cali-INPUT"));
            assertThat(client.tcpConnects("10.99.0.2", 8080, CONNECT_TIMEOUT)).isTrue();
        }
    }
}
