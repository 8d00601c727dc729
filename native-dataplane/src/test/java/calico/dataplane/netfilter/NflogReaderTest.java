package calico.dataplane.netfilter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.dataplane.netlink.NetlinkException;
import calico.dataplane.testing.NetNs;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link NflogReader} against the real kernel: nft {@code log group} rules in a router
 * namespace, real TCP, UDP, ICMP and ICMPv6 traffic forwarded through it between two other
 * namespaces, and the reader opened inside the router namespace.
 */
class NflogReaderTest {
    private static final String PREFIX_IN = "API0|default.allow-client";
    private static final String PREFIX_OUT = "APE1|gnp/tier.very-long-policy-name";
    /** The overrun test's source ports: the flood's, and its first marker's (each marker has its own, counting down). */
    private static final int FLOOD_PORT = 2000;
    private static final int MARKER_PORT = 1999;

    private ThreeNamespaces net;
    private NflogReader reader;
    private final LinkedBlockingQueue<NflogPacket> packets = new LinkedBlockingQueue<>();
    private final List<NflogPacket> seen = new ArrayList<>();

    @BeforeEach
    void setUp() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        net = new ThreeNamespaces("nflog");
        net.nft("""
                table inet flowtest {
                  chain forwarded {
                    type filter hook forward priority 0; policy accept;
                    iifname "hc" log prefix "%s" group 1
                    iifname "hs" log prefix "%s" group 2
                  }
                }
                """.formatted(PREFIX_IN, PREFIX_OUT));
    }

    @AfterEach
    void tearDown() {
        if (reader != null) {
            reader.close();
        }
        if (net != null) {
            net.close();
        }
    }

    @AfterAll
    static void noNamespaceLeftBehind() {
        assertThat(ThreeNamespaces.leftovers()).isEmpty();
    }

    @Test
    void readsTcpUdpAndIcmpPacketsOfBothGroupsWithPrefixTupleAndInterfaces() throws Exception {
        reader = net.router.call(() -> NflogReader.open(List.of(1, 2), packets::add));
        int hc = net.routerIfindex("hc");
        int hs = net.routerIfindex("hs");
        Instant before = Instant.now().minusSeconds(1);

        try (NetNs.Listener tcp = net.server.tcpListener(ThreeNamespaces.SERVER4, 8080);
                NetNs.Listener udp = net.server.udpEcho(ThreeNamespaces.SERVER4, 5353)) {
            assertThat(net.client.tcpConnects(ThreeNamespaces.SERVER4, 8080, Duration.ofSeconds(5))).isTrue();
            assertThat(net.client.udpEchoes(ThreeNamespaces.SERVER4, 5353, Duration.ofSeconds(5))).isTrue();
            assertThat(net.client.pings(ThreeNamespaces.SERVER4, Duration.ofSeconds(5))).isTrue();
        }

        InetAddress c = InetAddress.getByName(ThreeNamespaces.CLIENT4);
        InetAddress s = InetAddress.getByName(ThreeNamespaces.SERVER4);
        NflogPacket syn = await(p -> p.tuple().protocol() == 6 && p.tuple().dstPort() == 8080);
        assertThat(syn.group()).isEqualTo(1);
        assertThat(syn.prefix()).isEqualTo(PREFIX_IN);
        assertThat(syn.tuple().src()).isEqualTo(c);
        assertThat(syn.tuple().dst()).isEqualTo(s);
        assertThat(syn.tuple().srcPort()).isPositive();
        assertThat(syn.inIfindex()).isEqualTo(hc);
        assertThat(syn.outIfindex()).isEqualTo(hs);
        assertThat(syn.length()).isGreaterThanOrEqualTo(40); // the SYN: IP + TCP headers with options
        assertThat(syn.time()).isAfter(before).isBefore(Instant.now().plusSeconds(1));

        NflogPacket synAck = await(p -> p.tuple().protocol() == 6 && p.tuple().srcPort() == 8080);
        assertThat(synAck.group()).isEqualTo(2);
        assertThat(synAck.prefix()).isEqualTo(PREFIX_OUT);
        assertThat(synAck.tuple()).isEqualTo(syn.tuple().reversed());
        assertThat(synAck.inIfindex()).isEqualTo(hs);
        assertThat(synAck.outIfindex()).isEqualTo(hc);

        NflogPacket udpOut = await(p -> p.tuple().protocol() == 17 && p.tuple().dstPort() == 5353);
        assertThat(udpOut.group()).isEqualTo(1);
        assertThat(udpOut.length()).isEqualTo(20 + 8 + 16); // the probe's 16-byte token
        NflogPacket udpBack = await(p -> p.tuple().protocol() == 17 && p.tuple().srcPort() == 5353);
        assertThat(udpBack.group()).isEqualTo(2);
        assertThat(udpBack.tuple()).isEqualTo(udpOut.tuple().reversed());

        NflogPacket echo = await(p -> p.tuple().protocol() == 1 && p.group() == 1);
        assertThat(echo.tuple()).isEqualTo(new FlowTuple(c, s, 1, 0, 0));
        assertThat(echo.length()).isEqualTo(20 + 8 + 16);
        NflogPacket echoReply = await(p -> p.tuple().protocol() == 1 && p.group() == 2);
        assertThat(echoReply.tuple()).isEqualTo(new FlowTuple(s, c, 1, 0, 0));

        assertThat(reader.malformed()).isZero();
        assertThat(reader.overruns()).isZero();
        assertThat(reader.lost()).isZero();
    }

    @Test
    void readsIpv6TcpAndIcmpv6() throws Exception {
        reader = net.router.call(() -> NflogReader.open(List.of(1, 2), packets::add));
        try (NetNs.Listener tcp = net.server.tcpListener(ThreeNamespaces.SERVER6, 8443)) {
            assertThat(net.client.tcpConnects(ThreeNamespaces.SERVER6, 8443, Duration.ofSeconds(5))).isTrue();
        }
        Icmp6.echo(net.client, ThreeNamespaces.SERVER6);

        InetAddress c = InetAddress.getByName(ThreeNamespaces.CLIENT6);
        InetAddress s = InetAddress.getByName(ThreeNamespaces.SERVER6);
        NflogPacket syn = await(p -> p.tuple().protocol() == 6 && p.tuple().dstPort() == 8443);
        assertThat(syn.group()).isEqualTo(1);
        assertThat(syn.prefix()).isEqualTo(PREFIX_IN);
        assertThat(syn.tuple().src()).isEqualTo(c);
        assertThat(syn.tuple().dst()).isEqualTo(s);
        assertThat(syn.inIfindex()).isEqualTo(net.routerIfindex("hc"));
        assertThat(syn.length()).isGreaterThanOrEqualTo(60); // 40-byte IPv6 header + TCP
        NflogPacket synAck = await(p -> p.tuple().protocol() == 6 && p.tuple().srcPort() == 8443);
        assertThat(synAck.group()).isEqualTo(2);
        assertThat(synAck.tuple()).isEqualTo(syn.tuple().reversed());

        NflogPacket echo = await(p -> p.tuple().protocol() == 58 && p.group() == 1);
        assertThat(echo.tuple()).isEqualTo(new FlowTuple(c, s, 58, 0, 0));
        assertThat(echo.length()).isEqualTo(40 + 16);
        assertThat(reader.malformed()).isZero();
    }

    @Test
    void aGroupIsReadByOneSocketPerNamespaceAndEachNamespaceHasItsOwn() throws Exception {
        reader = net.router.call(() -> NflogReader.open(List.of(1, 2), packets::add));
        // A second reader for group 2 in the same namespace: refused, and group 3 it asked for
        // too is left unbound (nothing half-done), so a third reader can take it.
        assertThatThrownBy(() -> net.router.call(() -> NflogReader.open(List.of(2, 3), p -> { })))
                .isInstanceOf(NetlinkException.class)
                .hasMessageContaining("bind NFLOG group 2")
                .hasMessageContaining("EPERM")
                .hasMessageContaining("another socket in this network namespace reads this group");
        net.router.call(() -> NflogReader.open(List.of(3), p -> { })).close();

        // The same group in another namespace is another instance: it sees that namespace's
        // packets only.
        LinkedBlockingQueue<NflogPacket> clientSide = new LinkedBlockingQueue<>();
        net.client.exec("nft", "add table ip t; add chain ip t out { type filter hook output priority 0; };"
                + " add rule ip t out icmp type echo-request log prefix \"client\" group 1");
        try (NflogReader other = net.client.call(() -> NflogReader.open(List.of(1), clientSide::add))) {
            assertThat(net.client.pings(ThreeNamespaces.SERVER4, Duration.ofSeconds(5))).isTrue();
            NflogPacket routed = await(p -> p.tuple().protocol() == 1 && p.group() == 1);
            assertThat(routed.prefix()).isEqualTo(PREFIX_IN);
            NflogPacket local = poll(clientSide);
            assertThat(local.prefix()).isEqualTo("client");
            assertThat(local.outIfindex()).isPositive();
            assertThat(local.inIfindex()).isZero(); // locally generated: no input interface
        }
        assertThat(packets).noneMatch(p -> p.prefix().equals("client"));
    }

    @Test
    void anOverrunIsCountedWithTheLostPacketsAndReadingGoesOn() throws Exception {
        net.nft("""
                table ip overrun {
                  chain out {
                    type filter hook output priority 0;
                    udp dport 9 log prefix "flood" group 3
                  }
                }
                """);
        int flood = 20_000;
        CountDownLatch sent = new CountDownLatch(1);
        AtomicLong got = new AtomicLong();
        // A small socket queue and a callback that blocks until the flood is sent: the queue must overflow.
        NflogReader.Options small = new NflogReader.Options(128, 16384, 16, Duration.ofMillis(10), 65536);
        reader = net.router.call(() -> NflogReader.open(List.of(3), small, p -> {
            if (got.incrementAndGet() == 1) {
                try {
                    sent.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            if (p.tuple().srcPort() != FLOOD_PORT) {
                packets.add(p);
            }
        }));
        sendUdp(flood, FLOOD_PORT);
        sent.countDown();
        // Markers after the overrun, each from its own port, until the one just sent arrives (one sent while the
        // reader still drains a full queue is lost as well, and counted so): it shows the gap by its sequence number,
        // and the counters, published before the callback sees a packet, then cover everything sent.
        int markers = 0;
        NflogPacket marker = null;
        while (marker == null && markers < 30) {
            int port = MARKER_PORT - markers++;
            sendUdp(1, port);
            marker = next(p -> p.tuple().srcPort() == port, Duration.ofSeconds(1));
        }
        assertThat(marker).as("a marker after the overrun, of " + markers + " sent").isNotNull();
        assertThat(marker.prefix()).isEqualTo("flood");
        assertThat(reader.overruns()).isPositive();
        assertThat(reader.lost()).isPositive();
        assertThat(reader.received() + reader.lost()).isEqualTo(flood + markers);
        assertThat(reader.malformed()).isZero();
    }

    private void sendUdp(int count, int sourcePort) {
        net.router.run(() -> {
            try (DatagramChannel ch = DatagramChannel.open()) {
                ch.bind(new InetSocketAddress("127.0.0.1", sourcePort));
                ByteBuffer payload = ByteBuffer.allocate(8);
                for (int i = 0; i < count; i++) {
                    ch.send(payload.clear(), new InetSocketAddress("127.0.0.1", 9));
                }
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
    }

    private NflogPacket await(Predicate<NflogPacket> wanted) throws InterruptedException {
        NflogPacket p = next(wanted, Duration.ofSeconds(10));
        if (p == null) {
            throw new AssertionError("no matching NFLOG packet within 10 s; saw " + seen);
        }
        return p;
    }

    /** {@return the first packet seen or arriving within {@code timeout} that is {@code wanted}}, null when none */
    private NflogPacket next(Predicate<NflogPacket> wanted, Duration timeout) throws InterruptedException {
        for (NflogPacket p : seen) {
            if (wanted.test(p)) {
                return p;
            }
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            NflogPacket p = packets.poll(100, TimeUnit.MILLISECONDS);
            if (p != null) {
                seen.add(p);
                if (wanted.test(p)) {
                    return p;
                }
            }
        }
        return null;
    }

    private static NflogPacket poll(LinkedBlockingQueue<NflogPacket> q) throws InterruptedException {
        NflogPacket p = q.poll(10, TimeUnit.SECONDS);
        assertThat(p).as("an NFLOG packet within 10 s").isNotNull();
        return p;
    }
}
