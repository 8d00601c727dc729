package calico.dataplane.wireguard;

import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.spec.NamedParameterSpec;
import java.security.spec.XECPrivateKeySpec;
import java.security.spec.XECPublicKeySpec;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import javax.crypto.KeyAgreement;

/**
 * A WireGuard key: 32 raw bytes of a Curve25519 private or public key, printed in base64 as
 * {@code wg} prints it (and as Calico publishes it on the Node), in hex on the userspace API.
 * Private keys are made and turned into public keys with the JDK's X25519, nothing else.
 */
public final class WireguardKey {

    public static final int LENGTH = 32;
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final BigInteger BASE_POINT = BigInteger.valueOf(9);

    private final byte[] bytes;

    private WireguardKey(byte[] bytes) {
        if (bytes.length != LENGTH) {
            throw new IllegalArgumentException("WireGuard key: " + bytes.length + " bytes, needs " + LENGTH);
        }
        this.bytes = bytes.clone();
    }

    public static WireguardKey of(byte[] raw) {
        return new WireguardKey(raw);
    }

    /** {@return the key printed as {@code text}} (base64, as {@code wg genkey}/{@code wg pubkey} print it). */
    public static WireguardKey fromBase64(String text) {
        try {
            return new WireguardKey(Base64.getDecoder().decode(text.strip()));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("WireGuard key '" + text + "': not 32 bytes of base64", e);
        }
    }

    /** {@return the key in the userspace API's hex form} */
    public static WireguardKey fromHex(String text) {
        try {
            return new WireguardKey(HexFormat.of().parseHex(text.strip()));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("WireGuard key '" + text + "': not 32 bytes of hex", e);
        }
    }

    /** {@return a new private key}: random, clamped as {@code wg genkey} clamps it. */
    public static WireguardKey generatePrivate() {
        byte[] k = new byte[LENGTH];
        RANDOM.nextBytes(k);
        k[0] &= (byte) 248;
        k[31] &= 127;
        k[31] |= 64;
        return new WireguardKey(k);
    }

    /** {@return the public key of this private key}: X25519(this, 9), as {@code wg pubkey}. */
    public WireguardKey publicKey() {
        return new WireguardKey(x25519(bytes, BASE_POINT));
    }

    /** {@return X25519(this, peer)}: the shared secret (for tests against RFC 7748's vectors). */
    public byte[] sharedSecret(WireguardKey peerPublic) {
        byte[] le = peerPublic.bytes.clone();
        le[31] &= 127; // RFC 7748: the top bit of u is masked
        return x25519(bytes, new BigInteger(1, reverse(le)));
    }

    private static byte[] x25519(byte[] scalar, BigInteger u) {
        try {
            KeyFactory kf = KeyFactory.getInstance("X25519");
            PrivateKey priv = kf.generatePrivate(new XECPrivateKeySpec(NamedParameterSpec.X25519, scalar.clone()));
            PublicKey pub = kf.generatePublic(new XECPublicKeySpec(NamedParameterSpec.X25519, u));
            KeyAgreement ka = KeyAgreement.getInstance("X25519");
            ka.init(priv);
            ka.doPhase(pub, true);
            return ka.generateSecret();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("X25519: " + e.getMessage(), e);
        }
    }

    private static byte[] reverse(byte[] b) {
        byte[] r = new byte[b.length];
        for (int i = 0; i < b.length; i++) {
            r[i] = b[b.length - 1 - i];
        }
        return r;
    }

    public byte[] bytes() {
        return bytes.clone();
    }

    public String base64() {
        return Base64.getEncoder().encodeToString(bytes);
    }

    public String hex() {
        return HexFormat.of().formatHex(bytes);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof WireguardKey k && Arrays.equals(bytes, k.bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }

    /** The base64 form: safe for public keys; never log a private key. */
    @Override
    public String toString() {
        return base64();
    }
}
