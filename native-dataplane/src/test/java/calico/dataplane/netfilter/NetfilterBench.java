package calico.dataplane.netfilter;

import calico.dataplane.testing.NetNs;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.DatagramChannel;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Figures for the netfilter readers:
 * <ol>
 *   <li>NFLOG decoding alone: kernel-shaped datagrams (64 messages each, IPv4 TCP/UDP and IPv6
 *       TCP) decoded in a loop, packets/s on one core;</li>
 *   <li>NFLOG end to end: N UDP datagrams to loopback in a fresh namespace, each logged by an
 *       nft {@code log group 1} rule, read by an {@link NflogReader}: packets/s delivered, and
 *       what was lost or overran;</li>
 *   <li>conntrack: N UDP entries (one per destination port) in a fresh namespace, then
 *       {@link ConntrackReader#dump()} timed.</li>
 * </ol>
 * Run: {@code bench/run.sh native-dataplane calico.dataplane.netfilter.NetfilterBench [N]}.
 */
public final class NetfilterBench {
    private NetfilterBench() {
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        decode();
        try (NetNs ns = NetNs.create("flows-native-bench")) {
            nflogEndToEnd(ns, 100_000);
            conntrackDump(ns, n);
        }
    }

    private static void decode() {
        byte[][] kinds = {
            NflogMessages.packet(2, 1, "API0|default.allow-all",
                    NflogMessages.ipv4("10.0.0.1", "10.0.0.2", 6, 60, 0, NflogMessages.ports(40000, 80, 36)), 3, 4, 0),
            NflogMessages.packet(2, 2, "APE0|default.allow-all",
                    NflogMessages.ipv4("10.0.0.2", "10.0.0.1", 17, 128, 0, NflogMessages.ports(53, 40000, 4)), 4, 3, 0),
            NflogMessages.packet(10, 1, "DPI|default.deny",
                    NflogMessages.ipv6("fd00::1", "fd00::2", 6, 40, NflogMessages.ports(40000, 443, 16)), 3, 4, 0),
        };
        int perDatagram = 64;
        ByteBuffer datagram = ByteBuffer.allocateDirect(64 * 1024).order(ByteOrder.nativeOrder());
        int[][] bounds = new int[perDatagram][];
        for (int i = 0; i < perDatagram; i++) {
            byte[] m = kinds[i % kinds.length];
            int at = datagram.position();
            datagram.put(m);
            bounds[i] = new int[] {at, at + m.length};
        }
        NflogDecoder decoder = new NflogDecoder();
        int type = NflogDecoder.NFNL_SUBSYS_ULOG << 8 | NflogDecoder.NFULNL_MSG_PACKET;
        long sink = 0;
        for (int round = 1; round <= 5; round++) {
            int datagrams = 40_000;
            long t0 = System.nanoTime();
            for (int d = 0; d < datagrams; d++) {
                Instant now = Instant.now();
                for (int[] b : bounds) {
                    NflogPacket p = decoder.decode(type, datagram, b[0] + 16, b[1], now);
                    sink += p.length();
                }
            }
            long ns = System.nanoTime() - t0;
            long packets = (long) datagrams * perDatagram;
            System.out.printf("decode round %d: %d NFLOG packets in %.0f ms = %.2f M packets/s (%.0f ns/packet)%n",
                    round, packets, ns / 1e6, packets / (ns / 1e9) / 1e6, (double) ns / packets);
        }
        if (sink == 42) {
            System.out.println(); // keeps the JIT from dropping the loop
        }
    }

    private static void nflogEndToEnd(NetNs ns, int count) throws Exception {
        ns.exec("nft", "add table ip bench; add chain ip bench out { type filter hook output priority 0; };"
                + " add rule ip bench out udp dport 9 log prefix \"API0|bench\" group 1");
        AtomicLong got = new AtomicLong();
        try (NflogReader reader = ns.call(() -> NflogReader.open(List.of(1), p -> got.incrementAndGet()))) {
            long t0 = System.nanoTime();
            ns.run(() -> {
                try (DatagramChannel ch = DatagramChannel.open()) {
                    ByteBuffer payload = ByteBuffer.allocate(32);
                    InetSocketAddress to = new InetSocketAddress("127.0.0.1", 9);
                    for (int i = 0; i < count; i++) {
                        payload.clear();
                        ch.send(payload, to);
                    }
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            long sent = System.nanoTime();
            long deadline = sent + 5_000_000_000L;
            while (got.get() + reader.lost() < count && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            long t1 = System.nanoTime();
            System.out.printf("nflog end to end: sent %d UDP packets in %.0f ms; reader got %d by %.0f ms"
                            + " (%.0f packets/s), lost %d, overruns %d, malformed %d%n",
                    count, (sent - t0) / 1e6, got.get(), (t1 - t0) / 1e6, got.get() / ((t1 - t0) / 1e9),
                    reader.lost(), reader.overruns(), reader.malformed());
        }
    }

    private static void conntrackDump(NetNs ns, int n) throws Exception {
        // A ct expression makes conntrack track this namespace's traffic.
        ns.exec("nft", "add table ip track; add chain ip track out { type filter hook output priority 0; };"
                + " add rule ip track out ct state new counter");
        if (n > 60_000) {
            throw new IllegalArgumentException("N: at most 60000 (one entry per destination port)");
        }
        ns.run(() -> {
            try (DatagramChannel ch = DatagramChannel.open()) {
                ByteBuffer payload = ByteBuffer.allocate(8);
                for (int i = 0; i < n; i++) {
                    payload.clear();
                    ch.send(payload, new InetSocketAddress("127.0.0.1", 2000 + i));
                }
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        try (ConntrackReader reader = ns.call(ConntrackReader::open)) {
            for (int round = 1; round <= 5; round++) {
                long t0 = System.nanoTime();
                int entries = reader.dump().size();
                long t1 = System.nanoTime();
                System.out.printf("conntrack dump round %d: %d entries in %.1f ms (%.1f us/entry)%n",
                        round, entries, (t1 - t0) / 1e6, (t1 - t0) / 1e3 / Math.max(1, entries));
            }
        }
    }
}
