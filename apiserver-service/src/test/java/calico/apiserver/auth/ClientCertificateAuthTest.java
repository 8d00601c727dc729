package calico.apiserver.auth;

import static org.assertj.core.api.Assertions.assertThat;

import calico.apiserver.e2e.ApiServerFixture;
import calico.apiserver.http.Http;
import calico.libcalico.testing.TestCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.net.ssl.SSLContext;
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
                "--requestheader-client-ca-file=" + proxies.caCert(), "--requestheader-allowed-names=client");
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    static SSLContext tls(Path cert, Path key) {
        return Http.tls(clients.caCert(), cert, key);
    }

    @Test
    void aClientCertificateIsItsCommonName() throws Exception {
        Http http = new Http("https://localhost:" + server.port(), null, tls(clients.clientCert(), clients.clientKey()));
        var r = http.send(http.request(GNS).header("X-Remote-User", "admin").header("X-Remote-Group", "system:masters"));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(403);
        assertThat(r.body()).contains("User \\\"client\\\" cannot list resource \\\"globalnetworksets\\\"");
    }

    @Test
    void aCertificateNotMadeForClientsIsNobody() {
        // The CA signed it, but for serving only (extendedKeyUsage serverAuth): as kube, it names no user.
        Http server = new Http("https://localhost:" + ClientCertificateAuthTest.server.port(), null,
                tls(clients.serverCert(), clients.serverKey()));
        assertThat(server.send(server.request(GNS)).statusCode()).isEqualTo(401);
    }

    @Test
    void frontProxyHeadersAreTrustedFromItsCertificateOnly() throws Exception {
        Http proxy = new Http("https://localhost:" + server.port(), null, tls(proxies.clientCert(), proxies.clientKey()));
        var r = proxy.send(proxy.request(GNS).header("X-Remote-User", "aggregator-admin")
                .header("X-Remote-Group", "system:masters"));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        var noUser = proxy.send(proxy.request(GNS));
        assertThat(noUser.statusCode()).isEqualTo(401);
        // Signed by the request-header CA, but not one of --requestheader-allowed-names: not a proxy.
        Path[] intruder = proxies.client("intruder");
        Http other = new Http("https://localhost:" + server.port(), null, tls(intruder[0], intruder[1]));
        assertThat(other.send(other.request(GNS).header("X-Remote-User", "aggregator-admin")
                .header("X-Remote-Group", "system:masters")).statusCode()).isEqualTo(401);
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
