package calico.dataplane.netfilter;

import static calico.dataplane.netfilter.NflogMessages.buffer;
import static calico.dataplane.netfilter.NflogMessages.ipv4;
import static calico.dataplane.netfilter.NflogMessages.ipv6;
import static calico.dataplane.netfilter.NflogMessages.packet;
import static calico.dataplane.netfilter.NflogMessages.ports;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The NFLOG message and packet parsers on hand-built input, malformed input above all. */
class NflogDecoderTest {
    private static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");
    private static final int PACKET = NflogDecoder.NFNL_SUBSYS_ULOG << 8 | NflogDecoder.NFULNL_MSG_PACKET;

    private final NflogDecoder decoder = new NflogDecoder();

    private NflogPacket decode(byte[] message) {
        ByteBuffer b = buffer(message);
        return decoder.decode(b.getShort(4) & 0xffff, b, 16, message.length, NOW);
    }

    @Test
    void decodesAnIpv4TcpPacket() throws Exception {
        byte[] ip = ipv4("10.0.0.1", "10.0.0.2", 6, 60, 0, ports(40000, 80, 36));
        NflogPacket p = decode(packet(2, 1, "API0|default.allow", ip, 3, 4, 0));
        assertThat(p).isEqualTo(new NflogPacket(1, "API0|default.allow",
                new FlowTuple(InetAddress.getByName("10.0.0.1"), InetAddress.getByName("10.0.0.2"), 6, 40000, 80),
                60, 3, 4, NOW));
        assertThat(decoder.malformed()).isZero();
    }

    @Test
    void lengthIsTheIpHeadersNotTheBytesCopied() {
        // A 1500-byte UDP packet of which only 28 bytes were copied (copy range).
        NflogPacket p = decode(packet(2, 2, "x", ipv4("10.0.0.1", "10.0.0.2", 17, 1500, 0, ports(53, 5353, 4)), 0, 0, -1));
        assertThat(p.length()).isEqualTo(1500);
        assertThat(p.tuple().srcPort()).isEqualTo(53);
        assertThat(p.tuple().dstPort()).isEqualTo(5353);
        assertThat(p.inIfindex()).isZero();
        assertThat(p.outIfindex()).isZero();
        assertThat(p.group()).isEqualTo(2);
    }

    @Test
    void icmpAndUnknownProtocolsHaveNoPorts() {
        assertThat(decode(packet(2, 1, "p", ipv4("10.0.0.1", "10.0.0.2", 1, 84, 0, new byte[] {8, 0, 0, 0, 0, 1, 0, 1}),
                0, 0, -1)).tuple()).extracting(FlowTuple::protocol, FlowTuple::srcPort, FlowTuple::dstPort)
                .containsExactly(1, 0, 0);
        // GRE (47) with nothing after the IP header: not malformed, just no ports.
        assertThat(decode(packet(2, 1, "p", ipv4("10.0.0.1", "10.0.0.2", 47, 20, 0, new byte[0]), 0, 0, -1)).tuple())
                .extracting(FlowTuple::protocol, FlowTuple::srcPort, FlowTuple::dstPort).containsExactly(47, 0, 0);
        // A later fragment of a TCP packet carries no TCP header.
        assertThat(decode(packet(2, 1, "p", ipv4("10.0.0.1", "10.0.0.2", 6, 100, 0x00b9, new byte[0]), 0, 0, -1)).tuple())
                .extracting(FlowTuple::protocol, FlowTuple::srcPort).containsExactly(6, 0);
        assertThat(decoder.malformed()).isZero();
    }

    @Test
    void ipv6WalksExtensionHeadersToTheUpperLayer() throws Exception {
        // Hop-by-hop (8 bytes) -> fragment (8 bytes, first fragment) -> UDP.
        ByteBuffer rest = ByteBuffer.allocate(8 + 8 + 8);
        rest.put((byte) 44).put((byte) 0).put(new byte[6]);
        rest.put((byte) 17).put((byte) 0).putShort((short) 0x0001).putInt(7);
        rest.putShort((short) 546).putShort((short) 547).putInt(0);
        NflogPacket p = decode(packet(10, 1, "v6", ipv6("fd00::1", "fd00::2", 0, 24, rest.array()), 5, 0, -1));
        assertThat(p.tuple()).isEqualTo(new FlowTuple(InetAddress.getByName("fd00::1"), InetAddress.getByName("fd00::2"),
                17, 546, 547));
        assertThat(p.length()).isEqualTo(64);

        NflogPacket icmp6 = decode(packet(10, 1, "v6", ipv6("fd00::1", "fd00::2", 58, 16, new byte[] {(byte) 128, 0, 0, 0}),
                0, 0, -1));
        assertThat(icmp6.tuple().protocol()).isEqualTo(58);
        assertThat(icmp6.tuple().srcPort()).isZero();
        assertThat(decoder.malformed()).isZero();
    }

    @Test
    void sctpPortsAreRead() {
        NflogPacket p = decode(packet(2, 1, "s", ipv4("10.0.0.1", "10.0.0.2", 132, 48, 0, ports(5000, 6000, 8)), 0, 0, -1));
        assertThat(p.tuple().srcPort()).isEqualTo(5000);
        assertThat(p.tuple().dstPort()).isEqualTo(6000);
    }

    @Test
    void malformedPacketsAreCountedNotThrown() {
        List<byte[]> bad = List.of(
                new byte[0],                                                               // empty payload
                ipv4("10.0.0.1", "10.0.0.2", 6, 40, 0, new byte[0]),                       // TCP header missing
                ipv4("10.0.0.1", "10.0.0.2", 17, 30, 0, new byte[] {1, 2}),                // UDP ports cut
                java.util.Arrays.copyOf(ipv4("10.0.0.1", "10.0.0.2", 6, 40, 0, ports(1, 2, 0)), 12), // IP header cut
                headerLength(ipv4("10.0.0.1", "10.0.0.2", 6, 40, 0, ports(1, 2, 0)), 15), // IHL 60 > bytes present
                new byte[] {0x55, 0, 0, 0},                                                // IP version 5
                ipv6("fd00::1", "fd00::2", 6, 20, new byte[2]),                            // TCP ports cut
                ipv6("fd00::1", "fd00::2", 0, 4, new byte[4]),                             // hop-by-hop cut
                java.util.Arrays.copyOf(ipv6("fd00::1", "fd00::2", 17, 8, new byte[8]), 39)); // IPv6 header cut
        for (byte[] payload : bad) {
            assertThat(decode(packet(2, 1, "p", payload, 0, 0, -1))).isNull();
        }
        // An IPv6 packet in an IPv4 message.
        assertThat(decode(packet(2, 1, "p", ipv6("fd00::1", "fd00::2", 58, 0, new byte[0]), 0, 0, -1))).isNull();
        assertThat(decoder.malformed()).isEqualTo(bad.size() + 1);
    }

    @Test
    void malformedMessagesAreCountedNotThrown() {
        byte[] good = packet(2, 1, "API0|x", ipv4("10.0.0.1", "10.0.0.2", 6, 40, 0, ports(1, 2, 16)), 1, 2, 0);
        // Every truncation of a good message, including cuts inside an attribute.
        long before = decoder.malformed();
        for (int len = 16; len < good.length; len++) {
            ByteBuffer b = buffer(good);
            NflogPacket p = decoder.decode(PACKET, b, 16, len, NOW);
            assertThat(p).as("cut at %d", len).isNull();
        }
        assertThat(decoder.malformed() - before).isEqualTo(good.length - 16);
        // Random payloads of every size never throw.
        Random random = new Random(42);
        for (int i = 0; i < 2_000; i++) {
            byte[] junk = new byte[random.nextInt(80)];
            random.nextBytes(junk);
            decode(packet(random.nextBoolean() ? 2 : 10, 1, "p", junk, 0, 0, -1));
        }
        // Messages of other types are not packets and not malformed.
        long malformed = decoder.malformed();
        assertThat(decoder.decode(NflogDecoder.NFNL_SUBSYS_ULOG << 8 | NflogDecoder.NFULNL_MSG_CONFIG, buffer(good), 16,
                good.length, NOW)).isNull();
        assertThat(decoder.malformed()).isEqualTo(malformed);
    }

    @Test
    void prefixTimestampAndSequenceGaps() {
        byte[] ip = ipv4("10.0.0.1", "10.0.0.2", 17, 28, 0, ports(1, 2, 4));
        assertThat(decode(packet(2, 1, null, ip, 0, 0, 10)).prefix()).isEmpty();
        decode(packet(2, 1, "a", ip, 0, 0, 11));
        decode(packet(2, 2, "b", ip, 0, 0, 0)); // another group has its own sequence
        decode(packet(2, 1, "c", ip, 0, 0, 15)); // 12, 13, 14 never arrived
        assertThat(decoder.lost()).isEqualTo(3);
        assertThat(decoder.decoded()).isEqualTo(4);

        byte[] stamped = new NfRequest(NflogDecoder.NFNL_SUBSYS_ULOG, NflogDecoder.NFULNL_MSG_PACKET, 0, 2, 1)
                .attr(NflogDecoder.NFULA_TIMESTAMP, ByteBuffer.allocate(16).putLong(1_700_000_000L).putLong(250_000).array())
                .attr(NflogDecoder.NFULA_PREFIX, "pre\0\0\0".getBytes(java.nio.charset.StandardCharsets.US_ASCII))
                .attr(NflogDecoder.NFULA_PAYLOAD, ip).finish(0);
        NflogPacket p = decode(stamped);
        assertThat(p.time()).isEqualTo(Instant.ofEpochSecond(1_700_000_000L).plusMillis(250));
        assertThat(p.prefix()).isEqualTo("pre");
    }

    @Test
    void optionsAreChecked() {
        assertThatThrownBy(() -> NflogReader.open(List.of(), p -> { }))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("groups");
        assertThatThrownBy(() -> NflogReader.open(List.of(70000), p -> { }))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("70000");
        assertThatThrownBy(() -> new NflogReader.Options(20, 65536, 1, Duration.ZERO, 1 << 20))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("copyRange");
        assertThatThrownBy(() -> new NflogReader.Options(128, 1 << 20, 1, Duration.ZERO, 1 << 20))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("kernelBatchBytes");
    }

    private static byte[] headerLength(byte[] ip, int ihlWords) {
        ip[0] = (byte) (0x40 | ihlWords);
        return ip;
    }
}
