package calico.typha.server;

import static calico.typha.server.TyphaFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

import calico.libcalico.datastore.memory.MemoryDatastore;
import calico.libcalico.health.HealthAggregator;
import calico.libcalico.testing.TestCertificates;
import calico.libcalico.typha.PeerIdentity;
import calico.libcalico.typha.SyncerType;
import calico.libcalico.typha.TyphaClient;
import calico.libcalico.typha.TyphaClientOptions;
import calico.libcalico.typha.TyphaClientTls;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import io.grpc.netty.NettyChannelBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Mutual TLS as Calico does it: CA-signed certificates both ways, then the CN / URI SAN rule. */
class TlsTest {

    private static final String FELIX_URI = "spiffe://cluster.local/ns/calico-system/sa/calico-node";

    @TempDir
    static Path dir;
    static TestCertificates certs;
    static Path[] uriClient;

    private final MemoryDatastore ds = new MemoryDatastore();
    private TyphaServer typha;

    @BeforeAll
    static void certificates() throws Exception {
        certs = TestCertificates.generate(dir);
        uriClient = leafWithUri("felix-node-7", FELIX_URI);
    }

    /** A client certificate with an unrelated CN and a URI SAN, signed by the test CA. */
    static Path[] leafWithUri(String cn, String uri) throws Exception {
        Path ext = dir.resolve(cn + ".ext");
        Files.writeString(ext, "subjectAltName=URI:" + uri + "\nextendedKeyUsage=clientAuth\n");
        Path key = dir.resolve(cn + ".key");
        Path csr = dir.resolve(cn + ".csr");
        Path crt = dir.resolve(cn + ".crt");
        run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key.toString(), "-out", csr.toString(),
                "-subj", "/CN=" + cn);
        run("openssl", "x509", "-req", "-in", csr.toString(), "-CA", certs.caCert().toString(), "-CAkey",
                certs.caKey().toString(), "-CAcreateserial", "-out", crt.toString(), "-days", "1",
                "-extfile", ext.toString());
        return new Path[] {crt, key};
    }

    private static void run(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0).as(out).isTrue();
    }

    @AfterEach
    void tearDown() {
        if (typha != null) {
            typha.close();
        }
        ds.close();
    }

    private int start(String clientCn, String clientUriSan) {
        typha = new TyphaServer(ds, ServerSettings.defaults(0),
                TyphaTls.serverCredentials(certs.caCert().toString(), certs.serverCert().toString(),
                        certs.serverKey().toString()),
                new SimpleMeterRegistry(), new HealthAggregator(Clock.systemUTC()), "test",
                TyphaTls.clientIdentityCheck(clientCn, clientUriSan));
        typha.start();
        ds.create(TyphaServerTest.set("tls-visible", 1, 1));
        return typha.port();
    }

    private TyphaClientOptions options(int port, Path cert, Path key, PeerIdentity server) {
        return TyphaClientOptions.plaintext(List.of("127.0.0.1:" + port), "node-tls", SyncerType.FELIX)
                .withBackoff(Duration.ofMillis(50), Duration.ofMillis(200))
                .withChannels(TyphaClientTls.channels(certs.caCert(), cert, key, server));
    }

    private RawClient raw(int port, Path cert, Path key, PeerIdentity server) {
        return RawClient.over(TyphaClientTls.channels(certs.caCert(), cert, key, server).apply("127.0.0.1:" + port));
    }

    @Test
    void acceptedByClientCn() {
        int port = start("client", "");
        ViewRecorder v = new ViewRecorder();
        try (TyphaClient c = new TyphaClient(options(port, certs.clientCert(), certs.clientKey(),
                new PeerIdentity("server", "")), v)) {
            c.start();
            await("in sync over TLS", v::inSync);
            assertThat(v.view()).hasSize(1);
        }
    }

    @Test
    void acceptedByClientUriSan() {
        int port = start("", FELIX_URI);
        ViewRecorder v = new ViewRecorder();
        try (TyphaClient c = new TyphaClient(options(port, uriClient[0], uriClient[1],
                new PeerIdentity("server", "")), v)) {
            c.start();
            await("in sync over TLS", v::inSync);
            assertThat(v.view()).hasSize(1);
        }
    }

    @Test
    void rejectedWhenNeitherCnNorUriSanMatches() throws Exception {
        int port = start("typha-client", "spiffe://elsewhere/felix");
        try (RawClient c = raw(port, certs.clientCert(), certs.clientKey(), new PeerIdentity("server", ""))) {
            c.hello("node-tls", "felix");
            Status s = c.awaitClose();
            assertThat(s.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
            assertThat(s.getDescription()).contains("CN \"client\"").contains("typha-client")
                    .contains("TYPHA_CLIENTCN");
        }
        assertThat(typha.connectionCount()).isZero();
    }

    @Test
    void felixRejectsATyphaWithTheWrongIdentity() throws Exception {
        int port = start("client", "");
        try (RawClient c = raw(port, certs.clientCert(), certs.clientKey(), new PeerIdentity("real-typha", ""))) {
            c.hello("node-tls", "felix");
            Status s = c.awaitClose();
            assertThat(s.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        }
        assertThat(typha.connectionCount()).isZero();
    }

    @Test
    void aClientWithoutACertificateIsRefusedInTheHandshake() throws Exception {
        int port = start("client", "");
        var creds = TlsChannelCredentials.newBuilder().trustManager(certs.caCert().toFile()).build();
        try (RawClient c = RawClient.over(NettyChannelBuilder.forTarget("127.0.0.1:" + port, creds).build())) {
            c.hello("anonymous", "felix");
            assertThat(c.awaitClose().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        }
        assertThat(typha.connectionCount()).isZero();
    }

    @Test
    void aPlaintextClientGetsNowhere() throws Exception {
        int port = start("client", "");
        try (RawClient c = RawClient.connect(port)) {
            c.hello("plain", "felix");
            assertThat(c.awaitClose().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        }
        assertThat(typha.connectionCount()).isZero();
    }
}
