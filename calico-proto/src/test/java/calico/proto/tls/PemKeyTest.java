package calico.proto.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** PKCS#1 keys (Helm's genSignedCert, openssl -traditional) become the same key as PKCS#8. */
class PemKeyTest {

    @TempDir
    Path dir;

    @Test
    void aPkcs1RsaKeyIsTheSameKeyAsItsPkcs8Form() throws Exception {
        Path pkcs1 = dir.resolve("rsa.pem");
        Path pkcs8 = dir.resolve("pkcs8.pem");
        openssl("genrsa", "-traditional", "-out", pkcs1.toString(), "2048");
        openssl("pkcs8", "-topk8", "-nocrypt", "-in", pkcs1.toString(), "-out", pkcs8.toString());
        assertThat(Files.readString(pkcs1)).startsWith("-----BEGIN RSA PRIVATE KEY-----");

        PrivateKey wrapped = rsa(PemKey.pkcs8(pkcs1));
        assertThat(wrapped.getEncoded()).isEqualTo(rsa(Files.newInputStream(pkcs8)).getEncoded());
        assertThat(rsa(PemKey.pkcs8(pkcs8)).getEncoded()).as("PKCS#8 as it is").isEqualTo(wrapped.getEncoded());
    }

    @Test
    void anotherFormIsRefusedNamingTheFileAndTheForm() throws Exception {
        Path ec = dir.resolve("ec.pem");
        openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", ec.toString());
        assertThatThrownBy(() -> PemKey.pkcs8(ec)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(ec.toString()).hasMessageContaining("EC PRIVATE KEY");
        Path none = Files.writeString(dir.resolve("none.pem"), "not a key");
        assertThatThrownBy(() -> PemKey.pkcs8(none)).hasMessageContaining("no PEM block");
    }

    private static PrivateKey rsa(InputStream pem) throws Exception {
        String text = new String(pem.readAllBytes(), StandardCharsets.US_ASCII);
        assertThat(text).startsWith("-----BEGIN PRIVATE KEY-----");
        String body = text.replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
        return KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(body)));
    }

    private static void openssl(String... args) throws Exception {
        String[] command = new String[args.length + 1];
        command[0] = "openssl";
        System.arraycopy(args, 0, command, 1, args.length);
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as(out).isZero();
    }
}
