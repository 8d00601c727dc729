package calico.api.validation;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Our own literal-only IP and CIDR parser (Go net.ParseIP / ParseCIDR semantics). */
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
            "::ffff:1.2.3.4, ::ffff:102:304",
            "64:ff9b::192.0.2.33, 64:ff9b::c000:221"})
    void parsesAndPrintsCanonically(String text, String canonical) {
        assertThat(IpAddress.parse(text).toString()).isEqualTo(canonical);
        assertThat(IpAddress.parse(canonical)).isEqualTo(IpAddress.parse(text));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4", "1.2.3.-1", "a.b.c.d", "1.2.3.4 ",
            "localhost", "example.com", ":::", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", "1::2::3", ":1::", "1::2:",
            "12345::", "g::", "fe80::1%eth0", "1.2.3.4::", "::1.2.3", "1:2:3:4:5:6:7::8"})
    void rejectsNonLiterals(String text) {
        assertThat(IpAddress.tryParse(text)).isEmpty();
    }

    @Test
    void cidrsKeepHostBitsAndKnowTheirNetwork() {
        Cidr c = Cidr.parse("10.1.2.3/16");
        assertThat(c.isStrictlyMasked()).isFalse();
        assertThat(c.network()).hasToString("10.1.0.0/16");
        assertThat(Cidr.parse("fd00::1/64").network()).hasToString("fd00::/64");
        assertThat(Cidr.parse("0.0.0.0/0").isStrictlyMasked()).isTrue();
        assertThat(Cidr.parse("::/0").contains(IpAddress.parse("2001:db8::1"))).isTrue();
        assertThat(Cidr.parse("::/0").contains(IpAddress.parse("10.0.0.1"))).isFalse();
        assertThat(Cidr.parse("10.0.0.0/8").contains(IpAddress.parse("10.255.255.255"))).isTrue();
        assertThat(Cidr.parse("10.0.0.0/8").contains(IpAddress.parse("11.0.0.0"))).isFalse();
        assertThat(Cidr.parse("2001:db8::/127").contains(IpAddress.parse("2001:db8::1"))).isTrue();
        assertThat(Cidr.parse("2001:db8::/128").contains(IpAddress.parse("2001:db8::1"))).isFalse();
    }

    @ParameterizedTest(name = "{0} overlaps {1}: {2}")
    @CsvSource({
            "10.0.0.0/8, 10.1.0.0/16, true",
            "10.1.0.0/16, 10.0.0.0/8, true",
            "10.0.0.0/16, 10.1.0.0/16, false",
            "192.168.0.0/24, 192.168.0.255/32, true",
            "fd00::/64, fd00:0:0:1::/64, false",
            "fd00::/48, fd00:0:0:1::/64, true",
            "::/0, 0.0.0.0/0, false"})
    void overlaps(String a, String b, boolean expected) {
        assertThat(Cidr.parse(a).overlaps(Cidr.parse(b))).isEqualTo(expected);
    }

    @ParameterizedTest
    @ValueSource(strings = {"10.0.0.0", "10.0.0.0/", "10.0.0.0/33", "10.0.0.0/-1", "10.0.0.0/08", "::/129", "x/8",
            "10.0.0.0/8/8"})
    void rejectsBadCidrs(String text) {
        assertThat(Cidr.tryParse(text)).isEmpty();
    }

    @Test
    void bareAddressesAreFullLengthWhereAllowed() {
        assertThat(Cidr.tryParseCidrOrIp("10.0.0.1")).contains(Cidr.parse("10.0.0.1/32"));
        assertThat(Cidr.tryParseCidrOrIp("fd00::1")).contains(Cidr.parse("fd00::1/128"));
        assertThat(Cidr.tryParseCidrOrIp("host.example")).isEmpty();
    }
}
