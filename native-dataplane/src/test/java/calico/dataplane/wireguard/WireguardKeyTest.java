package calico.dataplane.wireguard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** {@link WireguardKey} against RFC 7748 section 6.1's X25519 test vectors. */
class WireguardKeyTest {

    static final String ALICE_PRIVATE = "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a";
    static final String ALICE_PUBLIC = "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a";
    static final String BOB_PRIVATE = "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb";
    static final String BOB_PUBLIC = "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f";
    static final String SHARED = "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742";

    @Test
    void publicKeysAreRfc7748s() {
        assertThat(WireguardKey.fromHex(ALICE_PRIVATE).publicKey().hex()).isEqualTo(ALICE_PUBLIC);
        assertThat(WireguardKey.fromHex(BOB_PRIVATE).publicKey().hex()).isEqualTo(BOB_PUBLIC);
    }

    @Test
    void bothSidesAgreeOnRfc7748sSharedSecret() {
        byte[] ab = WireguardKey.fromHex(ALICE_PRIVATE).sharedSecret(WireguardKey.fromHex(BOB_PUBLIC));
        byte[] ba = WireguardKey.fromHex(BOB_PRIVATE).sharedSecret(WireguardKey.fromHex(ALICE_PUBLIC));
        assertThat(HexFormat.of().formatHex(ab)).isEqualTo(SHARED);
        assertThat(ba).isEqualTo(ab);
    }

    @Test
    void generatedKeysAreClampedAndAgree() {
        WireguardKey a = WireguardKey.generatePrivate();
        WireguardKey b = WireguardKey.generatePrivate();
        byte[] raw = a.bytes();
        assertThat(raw[0] & 7).isZero();
        assertThat(raw[31] & 0x80).isZero();
        assertThat(raw[31] & 0x40).isEqualTo(0x40);
        assertThat(a.sharedSecret(b.publicKey())).isEqualTo(b.sharedSecret(a.publicKey()));
        assertThat(a).isNotEqualTo(b);
    }

    @Test
    void printsAndParsesBase64AsWgDoes() {
        WireguardKey k = WireguardKey.fromHex(ALICE_PUBLIC);
        assertThat(k.base64()).hasSize(44).endsWith("=");
        assertThat(WireguardKey.fromBase64(k.base64())).isEqualTo(k);
        assertThatThrownBy(() -> WireguardKey.fromBase64("c2hvcnQ=")).hasMessageContaining("32 bytes");
    }
}
