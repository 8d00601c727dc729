package calico.api.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** CIDR text as Go parses and prints it, since Calico compares nets and ipNetworks as strings. */
class CidrTest {

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
            "10.1.2.3/16, 10.1.0.0/16",
            "0.0.0.0/0, 0.0.0.0/0",
            "192.168.7.9/32, 192.168.7.9/32",
            "::/0, ::/0",
            "2001:DB8:0:0:0:0:0:1/128, 2001:db8::1/128",
            "2001:db8:0:0:1:0:0:1/64, 2001:db8::/64",
            "2001:db8:0:1:0:0:0:0/64, 2001:db8:0:1::/64",
            "2001:db8:0:0:1:0:0:0/128, 2001:db8:0:0:1::/128",
            "2001:0:0:1:0:0:0:1/128, 2001:0:0:1::1/128",
            "2001:db8:0:0:1:0:0:1/128, 2001:db8::1:0:0:1/128",
            "2001:db8:1:2:3:4:5:6/128, 2001:db8:1:2:3:4:5:6/128",
            "2001:db8:0:1:1:1:1:1/128, 2001:db8:0:1:1:1:1:1/128",
            "64:ff9b::10.0.0.1/128, 64:ff9b::a00:1/128",
            "fd00::1/64, fd00::/64",
            // Go's net.ParseCIDR reads the prefix with dtoi: leading zeros are allowed.
            "10.0.0.0/08, 10.0.0.0/8",
            "10.1.0.0/0016, 10.1.0.0/16",
            // An IPv4-mapped address is IPv6, so its prefix counts 128 bits.
            "::ffff:10.1.2.3/120, ::ffff:a01:200/120"})
    void networksLoseHostBitsAndPrintCanonically(String in, String out) {
        assertThat(Cidr.parse(in).network().toString()).isEqualTo(out);
        assertThat(Cidr.parse(in).network().isStrictlyMasked()).isTrue();
    }

    @Test
    void cidrsKeepHostBitsAndKnowTheirNetwork() {
        Cidr c = Cidr.parse("10.1.2.3/16");
        assertThat(c.isStrictlyMasked()).isFalse();
        assertThat(c).hasToString("10.1.2.3/16");
        assertThat(c.prefixLength()).isEqualTo(16);
        assertThat(c.version()).isEqualTo(4);
        assertThat(c.network()).hasToString("10.1.0.0/16");
        assertThat(c).isNotEqualTo(c.network());
        assertThat(Cidr.parse("0.0.0.0/0").isStrictlyMasked()).isTrue();
        assertThat(Cidr.parse("fd00::/64").network()).isEqualTo(Cidr.parse("fd00::/64"));
    }

    @Test
    void containsAddresses() {
        assertThat(Cidr.parse("::/0").contains(IpAddress.parse("2001:db8::1"))).isTrue();
        assertThat(Cidr.parse("::/0").contains(IpAddress.parse("10.0.0.1"))).isFalse();
        assertThat(Cidr.parse("0.0.0.0/0").contains(IpAddress.parse("::ffff:10.0.0.1"))).isFalse();
        assertThat(Cidr.parse("10.0.0.0/8").contains(IpAddress.parse("10.255.255.255"))).isTrue();
        assertThat(Cidr.parse("10.0.0.0/8").contains(IpAddress.parse("11.0.0.0"))).isFalse();
        assertThat(Cidr.parse("10.9.9.9/8").contains(IpAddress.parse("10.0.0.0"))).isTrue();
        assertThat(Cidr.parse("2001:db8::/127").contains(IpAddress.parse("2001:db8::1"))).isTrue();
        assertThat(Cidr.parse("2001:db8::/128").contains(IpAddress.parse("2001:db8::1"))).isFalse();
    }

    @ParameterizedTest(name = "{0} contains {1}: {2}")
    @CsvSource({
            "10.0.0.0/8, 10.1.0.0/16, true",
            "10.1.0.0/16, 10.0.0.0/8, false",
            "10.0.0.0/8, 10.0.0.0/8, true",
            "10.0.0.0/8, 11.0.0.0/16, false",
            "10.0.0.0/8, 10.2.3.4/32, true",
            "0.0.0.0/0, ::/0, false",
            "::/0, 0.0.0.0/0, false",
            "fd00::/48, fd00:0:0:1::/64, true",
            "fd00:0:0:1::/64, fd00::/48, false"})
    void containsNetworks(String a, String b, boolean expected) {
        assertThat(Cidr.parse(a).contains(Cidr.parse(b))).isEqualTo(expected);
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
        assertThat(Cidr.parse(b).overlaps(Cidr.parse(a))).isEqualTo(expected);
    }

    @ParameterizedTest
    @ValueSource(strings = {"10.0.0.0", "10.0.0/8", "10.0.0.256/8", "010.0.0.0/8", "10.0.0.0/33", "10.0.0.0/",
            "1::2::3/64", "1:2:3:4:5:6:7:8:9/64", "12345::/16", "fe80::/129", "example.com/32", "g::/8",
            "10.0.0.0/-1", "::/129", "x/8", "10.0.0.0/8/8", "10.0.0.0/+8", "10.0.0.0/ 8", "10.0.0.0 /8",
            "fe80::1%eth0/64", "10.0.0.0/99999999999", "10.0.0.0/\uff18", "/8", ""})
    void rejectsMalformedNetworks(String in) {
        assertThat(Cidr.tryParse(in)).isEmpty();
        assertThatThrownBy(() -> Cidr.parse(in)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("\"" + in + "\"")
                .hasMessageContaining(in.contains("/") ? "" : "is not a CIDR");
    }

    @ParameterizedTest(name = "{0}: {1}")
    @CsvSource(delimiter = '|', value = {
            "10.0.0.0|\"10.0.0.0\" is not a CIDR (expected address/prefix-length)",
            "10.0.0.256/8|\"10.0.0.256/8\" is not a CIDR: \"10.0.0.256\" is not an IP address",
            "10.0.0.0/x|\"10.0.0.0/x\" has an invalid prefix length",
            "10.0.0.0/33|\"10.0.0.0/33\" has a prefix length over 32",
            "::/129|\"::/129\" has a prefix length over 128"})
    void errorsSayWhatIsWrong(String in, String message) {
        assertThatThrownBy(() -> Cidr.parse(in)).hasMessage(message);
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({"10.0.0.7, 10.0.0.7/32", "fd5f:8067::1, fd5f:8067::1/128", "10.0.0.7/24, 10.0.0.7/24"})
    void addressesGetAFullPrefixAndKeepTheirHostBits(String in, String out) {
        assertThat(Cidr.parseCidrOrIp(in)).hasToString(out);
        assertThat(Cidr.tryParseCidrOrIp(in)).contains(Cidr.parseCidrOrIp(in));
    }

    @Test
    void bareAddressesAreFullLengthWhereAllowed() {
        assertThat(Cidr.tryParseCidrOrIp("10.0.0.1")).contains(Cidr.parse("10.0.0.1/32"));
        assertThat(Cidr.tryParseCidrOrIp("fd00::1")).contains(Cidr.parse("fd00::1/128"));
        assertThat(Cidr.tryParseCidrOrIp("host.example")).isEmpty();
        assertThat(Cidr.tryParseCidrOrIp(null)).isEmpty();
        assertThat(Cidr.parseCidrOrIp("10.0.0.1").isSingleAddress()).isTrue();
        assertThat(Cidr.parse("10.0.0.1/31").isSingleAddress()).isFalse();
        assertThat(Cidr.of(IpAddress.parse("fd00::1"))).hasToString("fd00::1/128");
        assertThatThrownBy(() -> Cidr.parseCidrOrIp("10.244.1.700"))
                .hasMessage("\"10.244.1.700\" is not an IP address");
    }

    @Test
    void rejectsOutOfRangeConstruction() {
        assertThatThrownBy(() -> new Cidr(IpAddress.parse("10.0.0.0"), 33)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Cidr(null, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
