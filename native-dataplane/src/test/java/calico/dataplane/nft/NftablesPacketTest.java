package calico.dataplane.nft;

import static org.assertj.core.api.Assertions.assertThat;

import calico.dataplane.testing.NetNs;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Real packets: a sender and a receiver namespace joined by a veth; the receiver's nftables
 * drops one TCP port and lets another through. Traffic stays between the two namespaces.
 */
class NftablesPacketTest {

    private static final TableRef CALICO = TableRef.inet("calico");

    @Test
    void dropRuleBlocksOnePortAndAnotherStillConnects() throws Exception {
        try (NetNs sender = NetNs.create("calico-snd"); NetNs receiver = NetNs.create("calico-rcv")) {
            sender.veth("veth-s", receiver, "veth-r");
            sender.exec("ip", "addr", "add", "10.99.0.1/24", "dev", "veth-s");
            receiver.exec("ip", "addr", "add", "10.99.0.2/24", "dev", "veth-r");

            // Listening sockets belong to the namespace they were created in, whatever thread accepts.
            InetAddress rcvAddr = InetAddress.getByName("10.99.0.2");
            try (ServerSocket open = receiver.call(() -> new ServerSocket(8080, 8, rcvAddr));
                    ServerSocket blocked = receiver.call(() -> new ServerSocket(8081, 8, rcvAddr))) {
                // Before any rule, both ports connect: the test can tell a drop from a broken set-up.
                assertThat(connects(sender, 8080)).isTrue();
                assertThat(connects(sender, 8081)).isTrue();

                receiver.run(() -> {
                    try (Nftables nft = Nftables.open()) {
                        nft.apply(new NftBatch()
                                .addTable(CALICO)
                                .addChain(CALICO, "filter-INPUT", BaseChain.filter("input", "accept"))
                                .addSet(CALICO, "blocked-ports", SetSpec.of("inet_service"))
                                .addElements(CALICO, "blocked-ports", List.of(NftElem.port(PortRange.of(8081))))
                                .addRule(CALICO, "filter-INPUT", List.of(NftExpr.iifname("veth-r"),
                                        NftExpr.dportInSet("tcp", "blocked-ports"), NftExpr.counter(), NftExpr.drop())));
                    }
                });

                assertThat(connects(sender, 8080)).isTrue();
                assertThat(connects(sender, 8081)).isFalse();
                assertThat(receiver.exec("nft", "list", "chain", "inet", "calico", "filter-INPUT"))
                        .containsPattern("counter packets [1-9]");

                // Removing the port from the set (no rule change) opens it again.
                receiver.run(() -> {
                    try (Nftables nft = Nftables.open()) {
                        nft.apply(new NftBatch().deleteElements(CALICO, "blocked-ports",
                                List.of(NftElem.port(PortRange.of(8081)))));
                    }
                });
                assertThat(connects(sender, 8081)).isTrue();
            }
        }
    }

    @Test
    void ipv6SourceInAnIntervalSetIsDroppedAndAnotherSourceIsNot() throws Exception {
        try (NetNs sender = NetNs.create("calico-snd"); NetNs receiver = NetNs.create("calico-rcv")) {
            sender.veth("veth-s", receiver, "veth-r");
            sender.exec("ip", "-6", "addr", "add", "fd00:99::1/64", "dev", "veth-s", "nodad");
            sender.exec("ip", "-6", "addr", "add", "fd00:99::11/64", "dev", "veth-s", "nodad");
            receiver.exec("ip", "-6", "addr", "add", "fd00:99::2/64", "dev", "veth-r", "nodad");
            InetAddress rcvAddr = InetAddress.getByName("fd00:99::2");
            try (ServerSocket server = receiver.call(() -> new ServerSocket(9000, 8, rcvAddr))) {
                assertThat(connectsFrom(sender, "fd00:99::11")).isTrue();

                receiver.run(() -> {
                    try (Nftables nft = Nftables.open()) {
                        nft.apply(new NftBatch()
                                .addTable(CALICO)
                                .addChain(CALICO, "filter-INPUT", BaseChain.filter("input", "accept"))
                                .addSet(CALICO, "blocked-v6", SetSpec.cidrs(6))
                                .addElements(CALICO, "blocked-v6", List.of(NftElem.cidr("fd00:99::10/124")))
                                .addRule(CALICO, "filter-INPUT", List.of(NftExpr.saddrInSet(6, "blocked-v6"), NftExpr.drop())));
                    }
                });

                assertThat(connectsFrom(sender, "fd00:99::1")).isTrue();
                assertThat(connectsFrom(sender, "fd00:99::11")).isFalse();
            }
        }
    }

    /** Whether a TCP handshake from {@code source} to [fd00:99::2]:9000 completes within a second. */
    private static boolean connectsFrom(NetNs ns, String source) {
        return ns.call(() -> {
            try (Socket s = new Socket()) {
                s.bind(new InetSocketAddress(InetAddress.getByName(source), 0));
                s.connect(new InetSocketAddress("fd00:99::2", 9000), 1000);
                return true;
            } catch (SocketTimeoutException e) {
                return false;
            }
        });
    }

    /** Whether a TCP handshake to 10.99.0.2:port from {@code ns} completes within a second. */
    private static boolean connects(NetNs ns, int port) {
        return ns.call(() -> {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("10.99.0.2", port), 1000);
                return true;
            } catch (SocketTimeoutException e) {
                return false;
            } catch (IOException e) {
                throw new IllegalStateException("connect to port " + port + " failed other than by timeout: " + e, e);
            }
        });
    }
}
