package calico.dataplane.netlink;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/** Byte-level layout of requests: header, alignment, attributes, nesting. No kernel needed. */
class MessageEncodingTest {

    @Test
    void headerLengthAndSequenceAreFilledInAndAttributesArePaddedToFourBytes() {
        byte[] msg = new MessageWriter(24, 0x405).u8(2).u8(24).u8(0).u8(0).u8(254).u8(3).u8(0).u8(1).u32(4)
                .attr(1, new byte[] {10, 0, 0, 0})
                .attrString(3, "eth0") // 5 bytes with NUL: 9-byte attribute padded to 12
                .attrU32(15, 1000)
                .finish(77);
        ByteBuffer b = ByteBuffer.wrap(msg).order(ByteOrder.nativeOrder());
        assertThat(msg.length).isEqualTo(16 + 12 + 8 + 12 + 8);
        assertThat(b.getInt(0)).isEqualTo(msg.length);
        assertThat(b.getShort(4)).isEqualTo((short) 24);
        assertThat(b.getShort(6)).isEqualTo((short) 0x405);
        assertThat(b.getInt(8)).isEqualTo(77);
        assertThat(b.get(16 + 4)).isEqualTo((byte) 254); // rtm_table
        assertThat(b.getInt(16 + 8)).isEqualTo(4); // rtm_flags (RTNH_F_ONLINK)
        assertThat(b.getShort(28 + 8)).as("string attr length excludes padding").isEqualTo((short) 9);

        Attributes a = Attributes.parse(b.position(28));
        assertThat(a.address(1)).hasValueSatisfying(ip -> assertThat(ip.getHostAddress()).isEqualTo("10.0.0.0"));
        assertThat(a.string(3)).contains("eth0");
        assertThat(a.u32(15)).contains(1000);
        assertThat(a.has(2)).isFalse();
    }

    @Test
    void nestedAttributesAndTruncatedInputParseSafely() {
        MessageWriter w = new MessageWriter(16, 1);
        int start = w.beginNested(18);
        w.attrString(1, "veth");
        w.endNested(start);
        byte[] msg = w.finish(1);
        ByteBuffer b = ByteBuffer.wrap(msg).order(ByteOrder.nativeOrder());
        Attributes outer = Attributes.parse(b.position(16));
        assertThat(outer.nested(18).flatMap(i -> i.string(1))).contains("veth");

        // An attribute claiming more bytes than remain stops parsing instead of throwing.
        ByteBuffer bad = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putShort((short) 40).putShort((short) 1);
        assertThat(Attributes.parse(bad.flip()).has(1)).isFalse();
    }

    @Test
    void macAddressesRoundTripAndBadOnesAreRejected() {
        assertThat(Netlink.formatMac(Netlink.parseMac("EE:ee:00:01:02:ff"))).isEqualTo("ee:ee:00:01:02:ff");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> Netlink.parseMac("ee:ee:ee"))
                .hasMessageContaining("mac: 'ee:ee:ee'");
    }
}
