package calico.apiserver.auth;

import static org.assertj.core.api.Assertions.assertThat;

import calico.apiserver.e2e.ApiServerFixture;
import calico.apiserver.http.Http;
import calico.libcalico.testing.TestCertificates;
import java.io.ByteArrayInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Serving certificate from files, client certificates (--client-ca-file) and front-proxy
 * request headers (--requestheader-client-ca-file): headers are believed only from a
 * certificate of the front-proxy CA. The clients verify the server against its real CA.
 */
class ClientCertificateAuthTest {

    static final String GNS = "/apis/projectcalico.org/v3/globalnetworksets";

    static TestCertificates clients;
    static TestCertificates proxies;
    static ApiServerFixture server;

    @BeforeAll
    static void start() throws Exception {
        Path dir = Files.createTempDirectory("apiserver-pki");
        clients = TestCertificates.generate(dir.resolve("clients"));
        proxies = TestCertificates.generate(dir.resolve("proxies"));
        server = ApiServerFixture.start(null, "--tls-cert-file=" + clients.serverCert(),
                "--tls-private-key-file=" + clients.serverKey(), "--client-ca-file=" + clients.caCert(),
                "--requestheader-client-ca-file=" + proxies.caCert());
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    static SSLContext tls(Path cert, Path key) throws Exception {
        CertificateFactory cf = CertificateFactory.getInstance("X.509");
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("ca", cf.generateCertificate(new ByteArrayInputStream(Files.readAllBytes(clients.caCert()))));
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        KeyManagerFactory kmf = null;
        if (cert != null) {
            String pem = Files.readString(key).replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
            PrivateKey pk = KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(pem)));
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            ks.setKeyEntry("me", pk, new char[0], new Certificate[] {
                    cf.generateCertificate(new ByteArrayInputStream(Files.readAllBytes(cert)))});
            kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, new char[0]);
        }
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        return ctx;
    }

    @Test
    void aClientCertificateIsItsCommonName() throws Exception {
        Http http = new Http("https://localhost:" + server.port(), null, tls(clients.clientCert(), clients.clientKey()));
        var r = http.send(http.request(GNS).header("X-Remote-User", "admin").header("X-Remote-Group", "system:masters"));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(403);
        assertThat(r.body()).contains("User \\\"client\\\" cannot list resource \\\"globalnetworksets\\\"");
    }

    @Test
    void frontProxyHeadersAreTrustedFromItsCertificateOnly() throws Exception {
        Http proxy = new Http("https://localhost:" + server.port(), null, tls(proxies.clientCert(), proxies.clientKey()));
        var r = proxy.send(proxy.request(GNS).header("X-Remote-User", "aggregator-admin")
                .header("X-Remote-Group", "system:masters"));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        var noUser = proxy.send(proxy.request(GNS));
        assertThat(noUser.statusCode()).isEqualTo(401);
    }

    @Test
    void withoutCertificateOrTokenTheCallerIsUnauthorized() throws Exception {
        Http anon = new Http("https://localhost:" + server.port(), null, tls(null, null));
        assertThat(anon.send(anon.request(GNS).header("X-Remote-User", "admin")
                .header("X-Remote-Group", "system:masters")).statusCode()).isEqualTo(401);
        Http token = new Http("https://localhost:" + server.port(), ApiServerFixture.ADMIN_TOKEN, tls(null, null));
        assertThat(token.send(token.request(GNS)).statusCode()).isEqualTo(200);
    }
}
