package calico.goldmane.server;

import static calico.goldmane.server.TestFlows.flow;
import static calico.goldmane.server.TestFlows.key;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.goldmane.store.Buckets;
import calico.libcalico.goldmane.proto.Action;
import calico.libcalico.goldmane.proto.FlowCollectorGrpc;
import calico.libcalico.goldmane.proto.FlowListRequest;
import calico.libcalico.goldmane.proto.FlowsGrpc;
import calico.libcalico.testing.MutableClock;
import calico.libcalico.testing.TestCertificates;
import io.grpc.ChannelCredentials;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import java.io.File;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Mutual TLS from files: a client with a certificate from the CA gets in, others fail the handshake. */
class TlsTest {

    @TempDir
    static Path dir;
    static TestCertificates certs;
    static TestCertificates otherCa;
    static Goldmane gm;

    @BeforeAll
    static void start() throws Exception {
        certs = TestCertificates.generate(dir.resolve("good"));
        otherCa = TestCertificates.generate(dir.resolve("other"));
        gm = new Goldmane(new MutableClock(Goldmane.T0), new Buckets(15, 240, 20), null,
                GoldmaneTls.serverCredentials(certs.serverCert().toString(), certs.serverKey().toString(),
                        certs.caCert().toString()));
    }

    @AfterAll
    static void stop() {
        gm.close();
    }

    private static ChannelCredentials client(TestCertificates c, boolean withCert) throws Exception {
        var b = TlsChannelCredentials.newBuilder().trustManager(new File(certs.caCert().toString()));
        if (withCert) {
            b.keyManager(new File(c.clientCert().toString()), new File(c.clientKey().toString()));
        }
        return b.build();
    }

    @Test
    void clientWithCertificateFromTheCaIsServedOnCollectorAndQueries() throws Exception {
        var ch = gm.channel(client(certs, true));
        try (FelixClient felix = new FelixClient(FlowCollectorGrpc.newStub(ch), "node-1")) {
            felix.sendAndAwaitAcks(List.of(flow(key("a", "x-", "b", "y-", 80, Action.Allow), gm.now(), gm.now() + 5,
                    1, 1).build()));
        }
        var r = FlowsGrpc.newBlockingStub(ch).withDeadlineAfter(20, TimeUnit.SECONDS)
                .list(FlowListRequest.getDefaultInstance());
        assertThat(r.getFlowsCount()).isEqualTo(1);
    }

    @Test
    void clientWithoutCertificateIsRejected() throws Exception {
        var ch = gm.channel(client(certs, false));
        assertThatThrownBy(() -> FlowsGrpc.newBlockingStub(ch).withDeadlineAfter(20, TimeUnit.SECONDS)
                .list(FlowListRequest.getDefaultInstance()))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
    }

    @Test
    void clientWithCertificateFromAnotherCaIsRejected() throws Exception {
        var ch = gm.channel(client(otherCa, true));
        assertThatThrownBy(() -> FlowsGrpc.newBlockingStub(ch).withDeadlineAfter(20, TimeUnit.SECONDS)
                .list(FlowListRequest.getDefaultInstance()))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
    }

    @Test
    void plaintextClientIsRejected() {
        assertThatThrownBy(() -> gm.flows().list(FlowListRequest.getDefaultInstance()))
                .isInstanceOf(StatusRuntimeException.class);
    }

    /** Helm's genSignedCert and Go's tools write PKCS#1 RSA keys ({@code RSA PRIVATE KEY}): goldmane reads them too. */
    @Test
    void aServerKeyInPkcs1FormServesMutualTls() throws Exception {
        Path pkcs1 = dir.resolve("server-pkcs1.pem");
        Process p = new ProcessBuilder("openssl", "rsa", "-in", certs.serverKey().toString(), "-traditional", "-out",
                pkcs1.toString()).redirectErrorStream(true).start();
        assertThat(p.waitFor()).as(new String(p.getInputStream().readAllBytes())).isZero();
        assertThat(java.nio.file.Files.readString(pkcs1)).startsWith("-----BEGIN RSA PRIVATE KEY-----");
        Goldmane pkcs1Server = new Goldmane(new MutableClock(Goldmane.T0), new Buckets(15, 240, 20), null,
                GoldmaneTls.serverCredentials(certs.serverCert().toString(), pkcs1.toString(), certs.caCert().toString()));
        try {
            var r = FlowsGrpc.newBlockingStub(pkcs1Server.channel(client(certs, true)))
                    .withDeadlineAfter(20, TimeUnit.SECONDS).list(FlowListRequest.getDefaultInstance());
            assertThat(r.getFlowsCount()).isZero();
        } finally {
            pkcs1Server.close();
        }
    }
}
