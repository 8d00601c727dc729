package calico.api.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ASNumberTest {

    private static final String PEER = "apiVersion: projectcalico.org/v3\nkind: BGPPeer\nmetadata: {name: p}\nspec: {asNumber: %s}\n";

    private static ASNumber peerAs(String literal) {
        return ((BGPPeer) RoundTrip.CODEC.parse(String.format(PEER, literal))).spec().asNumber();
    }

    @Test
    void acceptsAnIntegerADigitStringAndDottedNotation() {
        assertThat(peerAs("64512")).isEqualTo(ASNumber.of(64512));
        assertThat(peerAs("'64512'")).isEqualTo(ASNumber.of(64512));
        assertThat(peerAs("'1.10'")).isEqualTo(ASNumber.of(65546)).isEqualTo(ASNumber.dotted(1, 10));
        assertThat(peerAs("4294967295").value()).isEqualTo(ASNumber.MAX);
        assertThat(peerAs("'65535.65535'").value()).isEqualTo(ASNumber.MAX);
        assertThat(peerAs("0").value()).isZero();
    }

    @Test
    void isWrittenAsAPlainNumberLikeCalicoDoes() {
        var peer = RoundTrip.CODEC.parse(String.format(PEER, "'1.10'"));
        assertThat(RoundTrip.CODEC.toJson(peer)).contains("\"asNumber\":65546");
        assertThat(RoundTrip.CODEC.parse(RoundTrip.CODEC.toYaml(peer))).isEqualTo(peer);
        assertThat(ASNumber.of(65546).toDotted()).isEqualTo("1.10");
        assertThat(ASNumber.of(65546).high()).isEqualTo(1);
        assertThat(ASNumber.of(65546).low()).isEqualTo(10);
    }

    @Test
    void rejectsMalformedValues() {
        for (String bad : new String[] {"'1.2.3'", "'.5'", "'5.'", "'65536.0'", "'4294967296'", "'-1'", "'x'", "''", "1.5", "[1]"}) {
            assertThatThrownBy(() -> peerAs(bad)).as(bad).hasMessageStartingWith("spec.asNumber: ");
        }
        assertThatThrownBy(() -> ASNumber.of(-1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ASNumber.dotted(65536, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
