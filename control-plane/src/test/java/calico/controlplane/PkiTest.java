package calico.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PkiTest {

    @TempDir
    Path dir;

    @Test
    void servingAndClientCertificatesChainToTheirCas() throws Exception {
        Pki pki = Pki.create(dir, "10.96.0.1");
        X509Certificate ca = read(pki.caCert());
        X509Certificate frontProxyCa = read(pki.frontProxyCaCert());
        X509Certificate serving = read(pki.apiServer().cert());
        serving.verify(ca.getPublicKey());
        List<String> names = serving.getSubjectAlternativeNames().stream().map(l -> String.valueOf(l.get(1))).toList();
        assertThat(names).contains("127.0.0.1", "10.96.0.1", "kubernetes.default.svc", "localhost");
        assertThat(serving.getExtendedKeyUsage()).containsExactly("1.3.6.1.5.5.7.3.1");

        X509Certificate proxy = read(pki.frontProxyClient().cert());
        proxy.verify(frontProxyCa.getPublicKey());
        assertThat(proxy.getSubjectX500Principal().getName()).isEqualTo("CN=front-proxy-client");

        Pki.Pair alice = pki.client("alice", "alice", List.of("team-a", "team-b"));
        X509Certificate client = read(alice.cert());
        client.verify(ca.getPublicKey());
        assertThat(client.getSubjectX500Principal().getName()).isEqualTo("CN=alice,O=team-b,O=team-a");
        assertThat(client.getExtendedKeyUsage()).containsExactly("1.3.6.1.5.5.7.3.2");
        assertThat(Files.readString(alice.key())).startsWith("-----BEGIN PRIVATE KEY-----");
        assertThat(Files.readString(pki.serviceAccountPublicKey())).startsWith("-----BEGIN PUBLIC KEY-----");
    }

    @Test
    void aSecondCreateKeepsEveryExistingFile() throws Exception {
        Pki first = Pki.create(dir, "10.96.0.1");
        byte[] ca = Files.readAllBytes(first.caCert());
        byte[] serving = Files.readAllBytes(first.apiServer().cert());
        byte[] sa = Files.readAllBytes(first.serviceAccountKey());
        Pki second = Pki.create(dir, "10.96.0.1");
        assertThat(Files.readAllBytes(second.caCert())).isEqualTo(ca);
        assertThat(Files.readAllBytes(second.apiServer().cert())).isEqualTo(serving);
        assertThat(Files.readAllBytes(second.serviceAccountKey())).isEqualTo(sa);
    }

    private static X509Certificate read(Path p) throws Exception {
        try (InputStream in = Files.newInputStream(p)) {
            return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
    }
}
