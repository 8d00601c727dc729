package calico.api.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The literal-only IP parser and printer (Go net.ParseIP semantics, Go's canonical text). */
class IpAddressTest {

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
            "0.0.0.0, 0.0.0.0",
            "255.255.255.255, 255.255.255.255",
            "10.1.2.3, 10.1.2.3",
            "::, ::",
            "::1, ::1",
            "1::, 1::",
            "FD00:0:0:0:0:0:0:1, fd00::1",
            "2001:db8:0:0:1:0:0:1, 2001:db8::1:0:0:1",
            "2001:0db8:0000:0000:0000:ff00:0042:8329, 2001:db8::ff00:42:8329",
            "1:0:1:1:1:1:1:1, 1:0:1:1:1:1:1:1",
            // RFC 5952: a single zero group is not compressed; the first of equal runs is.
            "2001:db8:0:1:1:1:1:1, 2001:db8:0:1:1:1:1:1",
            "2001:0:0:1:0:0:0:1, 2001:0:0:1::1",
            "2001:db8:0:0:1:0:0:0, 2001:db8:0:0:1::",
            "1:2:3:4:5:6:7::, 1:2:3:4:5:6:7:0",
            "::2:3:4:5:6:7:8, 0:2:3:4:5:6:7:8",
            // IPv4-mapped stays IPv6 and prints in hex groups (see design/net.md).
            "::ffff:1.2.3.4, ::ffff:102:304",
            "64:ff9b::192.0.2.33, 64:ff9b::c000:221",
            "1:2:3:4:5:6:1.2.3.4, 1:2:3:4:5:6:102:304"})
    void parsesAndPrintsCanonically(String text, String canonical) {
        assertThat(IpAddress.parse(text).toString()).isEqualTo(canonical);
        assertThat(IpAddress.parse(canonical)).isEqualTo(IpAddress.parse(text));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4", "1.2.3.-1", "a.b.c.d", "1.2.3.4 ",
            " 1.2.3.4", "1.2.3.+4", "localhost", "example.com", ":::", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7",
            "1::2::3", ":1::", "1::2:", "12345::", "g::", "fe80::1%eth0", "1.2.3.4::", "::1.2.3", "1:2:3:4:5:6:7::8",
            "1::1.2.3.4:5", "::ffff:01.2.3.4", "[::1]", "0x1.2.3.4",
            // Other scripts' digits: Character.digit would take them, Go does not.
            "\uff11::", "1.2.3.\u0664"})
    void rejectsNonLiterals(String text) {
        assertThat(IpAddress.tryParse(text)).isEmpty();
        assertThatThrownBy(() -> IpAddress.parse(text)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("\"" + text + "\" is not an IP address");
    }

    @Test
    void nullIsNotAnAddress() {
        assertThat(IpAddress.tryParse(null)).isEmpty();
    }

    @Test
    void versionBitsAndMask() {
        IpAddress v4 = IpAddress.parse("10.1.2.3");
        assertThat(v4.version()).isEqualTo(4);
        assertThat(v4.bits()).isEqualTo(32);
        assertThat(v4.mask(16)).hasToString("10.1.0.0");
        assertThat(v4.mask(0)).hasToString("0.0.0.0");
        assertThat(v4.mask(32)).isEqualTo(v4);
        IpAddress v6 = IpAddress.parse("2001:db8:1:2:3:4:5:6");
        assertThat(v6.version()).isEqualTo(6);
        assertThat(v6.bits()).isEqualTo(128);
        assertThat(v6.mask(64)).hasToString("2001:db8:1:2::");
        assertThat(v6.mask(65)).hasToString("2001:db8:1:2::");
        assertThat(v6.mask(80)).hasToString("2001:db8:1:2:3::");
        assertThat(v6.mask(127)).hasToString("2001:db8:1:2:3:4:5:6");
        assertThat(v6.mask(33)).hasToString("2001:db8::");
        assertThatThrownBy(() -> v4.mask(33)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> v6.mask(-1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void ordersV4BeforeV6ThenByUnsignedValue() {
        List<IpAddress> sorted = new ArrayList<>(List.of(IpAddress.parse("ffff::"), IpAddress.parse("::1"),
                IpAddress.parse("255.0.0.1"), IpAddress.parse("8000::"), IpAddress.parse("10.0.0.1"),
                IpAddress.parse("::ffff:0.0.0.0")));
        sorted.sort(null);
        assertThat(sorted).extracting(IpAddress::toString)
                .containsExactly("10.0.0.1", "255.0.0.1", "::1", "::ffff:0:0", "8000::", "ffff::");
    }

    @Test
    void bytesRoundTrip() {
        assertThat(IpAddress.parse("10.1.2.255").toBytes()).containsExactly(10, 1, 2, 0xFF);
        assertThat(IpAddress.of(new byte[] {(byte) 192, (byte) 168, 0, 1})).hasToString("192.168.0.1");
        assertThatThrownBy(() -> IpAddress.of(new byte[5])).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new IpAddress(5, 0, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new IpAddress(4, 0, 1L << 32)).isInstanceOf(IllegalArgumentException.class);
    }
}
