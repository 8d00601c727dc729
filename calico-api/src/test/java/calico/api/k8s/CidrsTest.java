package calico.api.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** CIDR text as Go prints it, since Calico's nets and ipNetworks are compared as strings. */
class CidrsTest {

    @ParameterizedTest
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
            "64:ff9b::10.0.0.1/128, 64:ff9b::a00:1/128"})
    void networksLoseHostBitsAndPrintCanonically(String in, String out) {
        assertThat(Cidrs.parseNetwork(in).toString()).isEqualTo(out);
    }

    @ParameterizedTest
    @CsvSource({"10.0.0.7, 10.0.0.7/32", "fd5f:8067::1, fd5f:8067::1/128", "10.0.0.7/24, 10.0.0.7/24"})
    void addressesGetAFullPrefixAndKeepTheirHostBits(String in, String out) {
        assertThat(Cidrs.parseAddressOrCidr(in).toString()).isEqualTo(out);
    }

    @ParameterizedTest
    @ValueSource(strings = {"10.0.0.0", "10.0.0/8", "10.0.0.256/8", "010.0.0.0/8", "10.0.0.0/33", "10.0.0.0/",
            "1::2::3/64", "1:2:3:4:5:6:7:8:9/64", "12345::/16", "fe80::/129", "example.com/32", "g::/8"})
    void rejectsMalformedNetworks(String in) {
        assertThatThrownBy(() -> Cidrs.parseNetwork(in)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(in.contains("/") ? "" : "is not a CIDR");
    }
}
