package calico.proto.tls;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A PEM private key file in the form Java's TLS reads (grpc-netty's {@code keyManager} takes
 * PKCS#8 only): a PKCS#8 key ({@code PRIVATE KEY}) as it is, a PKCS#1 RSA key ({@code RSA PRIVATE
 * KEY}: what Helm's {@code genSignedCert}, Go's tools and {@code openssl genrsa -traditional}
 * write, and Calico's Go components read) wrapped into PKCS#8. Anything else is refused naming
 * the file and the form found.
 */
public final class PemKey {

    private static final Pattern PEM = Pattern.compile("-----BEGIN ([A-Z ]+)-----([^-]+)-----END \\1-----");
    /** AlgorithmIdentifier of rsaEncryption (1.2.840.113549.1.1.1) with NULL parameters, DER. */
    private static final byte[] RSA_ALGORITHM = {0x30, 0x0d, 0x06, 0x09, 0x2a, (byte) 0x86, 0x48, (byte) 0x86,
            (byte) 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00};

    private PemKey() {
    }

    /** {@return the key of {@code keyFile} as a PKCS#8 PEM stream} */
    public static InputStream pkcs8(Path keyFile) {
        String text;
        try {
            text = Files.readString(keyFile, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new UncheckedIOException("key file " + keyFile + ": cannot read it", e);
        }
        Matcher m = PEM.matcher(text);
        if (!m.find()) {
            throw new IllegalArgumentException("key file " + keyFile + ": no PEM block in it");
        }
        byte[] der = Base64.getMimeDecoder().decode(m.group(2).strip());
        byte[] pkcs8 = switch (m.group(1)) {
            case "PRIVATE KEY" -> der;
            case "RSA PRIVATE KEY" -> wrapRsa(der);
            default -> throw new IllegalArgumentException("key file " + keyFile + ": a " + m.group(1)
                    + " block; expected a PKCS#8 PRIVATE KEY or a PKCS#1 RSA PRIVATE KEY");
        };
        String pem = "-----BEGIN PRIVATE KEY-----\n" + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(pkcs8)
                + "\n-----END PRIVATE KEY-----\n";
        return new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII));
    }

    /** PrivateKeyInfo ::= SEQUENCE { version 0, rsaEncryption, OCTET STRING (the PKCS#1 key) } */
    static byte[] wrapRsa(byte[] pkcs1) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.writeBytes(new byte[] {0x02, 0x01, 0x00});
        body.writeBytes(RSA_ALGORITHM);
        body.write(0x04);
        body.writeBytes(length(pkcs1.length));
        body.writeBytes(pkcs1);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(0x30);
        out.writeBytes(length(body.size()));
        out.writeBytes(body.toByteArray());
        return out.toByteArray();
    }

    /** A DER length: short form below 128, else 0x80 | count followed by the big-endian bytes. */
    private static byte[] length(int n) {
        if (n < 0x80) {
            return new byte[] {(byte) n};
        }
        int bytes = n < 0x100 ? 1 : n < 0x10000 ? 2 : n < 0x1000000 ? 3 : 4;
        byte[] out = new byte[bytes + 1];
        out[0] = (byte) (0x80 | bytes);
        for (int i = 0; i < bytes; i++) {
            out[bytes - i] = (byte) (n >>> (8 * i));
        }
        return out;
    }
}
