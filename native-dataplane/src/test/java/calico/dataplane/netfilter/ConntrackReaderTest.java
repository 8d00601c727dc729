package calico.dataplane.netfilter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.dataplane.netlink.NetlinkException;
import calico.dataplane.testing.NetNs;
import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link ConntrackReader} against the real kernel: conntrack in a router namespace (made active
 * by an nft {@code ct state} rule, as felix's rules do), accounting turned on there through
 * {@link ConntrackSettings}, real connections forwarded through it.
 */
class ConntrackReaderTest {
    private ThreeNamespaces net;
    private ConntrackReader reader;

    @BeforeEach
    void setUp() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        net = new ThreeNamespaces("ct");
        net.nft("""
                table inet flowtest {
                  chain forwarded {
                    type filter hook forward priority 0; policy accept;
                    ct state established,related counter accept
                    ct state new counter accept
                  }
                }
                """);
        net.router.run(() -> new ConntrackSettings().enableAccounting());
        assertThat(net.router.sysctl("netfilter/nf_conntrack_acct")).isEqualTo("1");
        assertThat(net.router.call(() -> new ConntrackSettings().accountingEnabled())).isTrue();
        assertThat(net.server.call(() -> new ConntrackSettings().accountingEnabled())).isFalse();
        reader = net.router.call(ConntrackReader::open);
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
    void dumpHasBothDirectionsAndCountersOfRealConnectionsInBothFamilies() throws Exception {
        int port4;
        int port6;
        try (TcpExchange s4 = TcpExchange.serve(net.server, ThreeNamespaces.SERVER4, 9000, 300);
                TcpExchange s6 = TcpExchange.serve(net.server, ThreeNamespaces.SERVER6, 9000, 300);
                NetNs.Listener udp = net.server.udpEcho(ThreeNamespaces.SERVER4, 5353)) {
            port4 = TcpExchange.exchange(net.client, ThreeNamespaces.SERVER4, 9000, 5000);
            port6 = TcpExchange.exchange(net.client, ThreeNamespaces.SERVER6, 9000, 5000);
            assertThat(net.client.udpEchoes(ThreeNamespaces.SERVER4, 5353, Duration.ofSeconds(5))).isTrue();
            assertThat(net.client.pings(ThreeNamespaces.SERVER4, Duration.ofSeconds(5))).isTrue();
        }

        List<ConntrackEntry> table = reader.dump();
        InetAddress c4 = InetAddress.getByName(ThreeNamespaces.CLIENT4);
        InetAddress s4 = InetAddress.getByName(ThreeNamespaces.SERVER4);
        FlowTuple tcp4 = new FlowTuple(c4, s4, 6, port4, 9000);
        ConntrackEntry e = find(table, tcp4).orElseThrow(() -> new AssertionError("no entry for " + tcp4 + " in " + table));
        assertThat(e.reply()).isEqualTo(tcp4.reversed());
        assertThat(e.destroyed()).isFalse();
        assertThat(e.id()).isPositive();
        assertThat(e.hasStatus(ConntrackEntry.STATUS_CONFIRMED | ConntrackEntry.STATUS_SEEN_REPLY
                | ConntrackEntry.STATUS_ASSURED)).isTrue();
        // 5000 bytes of request plus headers one way, 300 bytes of answer plus headers the other.
        assertThat(e.originalCounters().bytes()).isGreaterThan(5000);
        assertThat(e.originalCounters().packets()).isGreaterThanOrEqualTo(4);
        assertThat(e.replyCounters().bytes()).isGreaterThan(300).isLessThan(5000);
        assertThat(e.replyCounters().packets()).isGreaterThanOrEqualTo(3);

        FlowTuple tcp6 = new FlowTuple(InetAddress.getByName(ThreeNamespaces.CLIENT6),
                InetAddress.getByName(ThreeNamespaces.SERVER6), 6, port6, 9000);
        ConntrackEntry e6 = find(table, tcp6).orElseThrow(() -> new AssertionError("no entry for " + tcp6 + " in " + table));
        assertThat(e6.reply()).isEqualTo(tcp6.reversed());
        assertThat(e6.originalCounters().bytes()).isGreaterThan(5000);

        assertThat(table).anySatisfy(u -> {
            assertThat(u.original().protocol()).isEqualTo(17);
            assertThat(u.original().dstPort()).isEqualTo(5353);
            assertThat(u.reply().srcPort()).isEqualTo(5353);
            assertThat(u.originalCounters().packets()).isEqualTo(1);
            assertThat(u.originalCounters().bytes()).isEqualTo(20 + 8 + 16);
            assertThat(u.tcpState()).isEqualTo(ConntrackEntry.NO_TCP_STATE);
            assertThat(u.tcpClosed()).isFalse();
        });
        assertThat(table).anySatisfy(i -> {
            assertThat(i.original()).isEqualTo(new FlowTuple(c4, s4, 1, 0, 0));
            assertThat(i.reply()).isEqualTo(new FlowTuple(s4, c4, 1, 0, 0));
        });
        assertThat(reader.malformed()).isZero();
    }

    @Test
    void deletingAnEntryDeliversItsFinalCountersAsADestroyEvent() throws Exception {
        LinkedBlockingQueue<ConntrackEntry> destroyed = new LinkedBlockingQueue<>();
        // Subscribe before the connection starts: with the default nf_conntrack_events=2 only
        // connections created while someone listens produce events.
        AutoCloseable subscription = reader.subscribeDestroyed(destroyed::add);
        assertThatThrownBy(() -> reader.subscribeDestroyed(x -> { })).isInstanceOf(IllegalStateException.class);
        int port;
        try (TcpExchange s = TcpExchange.serve(net.server, ThreeNamespaces.SERVER4, 9001, 700)) {
            port = TcpExchange.exchange(net.client, ThreeNamespaces.SERVER4, 9001, 2000);
        }
        FlowTuple tcp = new FlowTuple(InetAddress.getByName(ThreeNamespaces.CLIENT4),
                InetAddress.getByName(ThreeNamespaces.SERVER4), 6, port, 9001);
        ConntrackEntry live = find(reader.dump(), tcp).orElseThrow();
        // Both ends closed: conntrack keeps the entry, in TIME_WAIT (or CLOSE), which is over.
        assertThat(live.tcpState()).isIn(ConntrackEntry.TCP_TIME_WAIT, ConntrackEntry.TCP_CLOSE);
        assertThat(live.tcpClosed()).isTrue();

        reader.delete(tcp); // the closed connection would sit in TIME_WAIT for 2 minutes
        ConntrackEntry end = null;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (end == null && System.nanoTime() < deadline) {
            ConntrackEntry d = destroyed.poll(100, TimeUnit.MILLISECONDS);
            if (d != null && d.original().equals(tcp)) {
                end = d;
            }
        }
        assertThat(end).as("DESTROY event for " + tcp).isNotNull();
        assertThat(end.destroyed()).isTrue();
        assertThat(end.id()).isEqualTo(live.id());
        assertThat(end.reply()).isEqualTo(tcp.reversed());
        assertThat(end.originalCounters()).isEqualTo(live.originalCounters());
        assertThat(end.replyCounters()).isEqualTo(live.replyCounters());
        assertThat(end.originalCounters().bytes()).isGreaterThan(2000);
        assertThat(end.replyCounters().bytes()).isGreaterThan(700);
        assertThat(find(reader.dump(), tcp)).isEmpty();
        assertThat(reader.destroyedSeen()).isPositive();

        // Gone: a second delete is ENOENT; a protocol without ports cannot be deleted by tuple.
        assertThatThrownBy(() -> reader.delete(tcp)).isInstanceOfSatisfying(NetlinkException.class,
                ex -> assertThat(ex.notFound()).isTrue());
        assertThatThrownBy(() -> reader.delete(new FlowTuple(tcp.src(), tcp.dst(), 1, 0, 0)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("protocol 1");

        // After the subscription closes another may start.
        subscription.close();
        reader.subscribeDestroyed(x -> { }).close();
    }

    @Test
    void aReaderSeesOnlyTheNamespaceItWasOpenedIn() throws Exception {
        try (TcpExchange s = TcpExchange.serve(net.server, ThreeNamespaces.SERVER4, 9002, 10);
                ConntrackReader serverSide = net.server.call(ConntrackReader::open)) {
            int port = TcpExchange.exchange(net.client, ThreeNamespaces.SERVER4, 9002, 10);
            FlowTuple tcp = new FlowTuple(InetAddress.getByName(ThreeNamespaces.CLIENT4),
                    InetAddress.getByName(ThreeNamespaces.SERVER4), 6, port, 9002);
            assertThat(find(reader.dump(), tcp)).isPresent();
            // The server namespace has no conntrack users: its table stays empty (called from this thread).
            assertThat(serverSide.dump()).isEmpty();
        }
    }

    private static Optional<ConntrackEntry> find(List<ConntrackEntry> table, FlowTuple original) {
        return table.stream().filter(e -> e.original().equals(original)).findFirst();
    }
}
