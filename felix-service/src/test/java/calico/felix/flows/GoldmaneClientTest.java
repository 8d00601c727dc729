package calico.felix.flows;

import static org.assertj.core.api.Assertions.assertThat;

import calico.libcalico.goldmane.proto.Action;
import calico.libcalico.goldmane.proto.EndpointType;
import calico.libcalico.goldmane.proto.Flow;
import calico.libcalico.goldmane.proto.FlowKey;
import calico.libcalico.goldmane.proto.FlowListResult;
import calico.libcalico.goldmane.proto.FlowResult;
import calico.libcalico.goldmane.proto.Reporter;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.TestCertificates;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client against a real goldmane: reports arrive and are acknowledged, also over mutual TLS
 * from files (and not with a certificate from another CA); a goldmane restart,
 * with reports submitted while it is away, loses nothing (no persistence: the replay restores
 * everything) and counts nothing twice (with snapshots: the replayed reports are duplicates).
 */
class GoldmaneClientTest {

    static Flow flow(String dest, long start, long packets) {
        return Flow.newBuilder().setKey(FlowKey.newBuilder().setSourceName("client").setSourceNamespace("dev")
                        .setSourceType(EndpointType.WorkloadEndpoint).setDestName(dest).setDestNamespace("prod")
                        .setDestType(EndpointType.WorkloadEndpoint).setDestPort(8080).setProto("tcp")
                        .setReporter(Reporter.Dst).setAction(Action.Allow))
                .setStartTime(start).setEndTime(start + 15).setPacketsIn(packets).setBytesIn(packets * 100)
                .setNumConnectionsStarted(1).build();
    }

    static long bucketStart() {
        long now = System.currentTimeMillis() / 1000;
        return now - now % 15;
    }

    static GoldmaneClient client(String target, int maxCached) {
        return new GoldmaneClient(new GoldmaneClient.Settings(target, "node-a", null, Duration.ofMinutes(5),
                maxCached, Duration.ofMillis(100)), Clock.systemUTC());
    }

    static <T> T await(String what, Await.Probe<T> seen, Predicate<T> done) {
        return Await.until(what, Duration.ofSeconds(30), seen, done);
    }

    static long packets(FlowListResult r, String dest) {
        return r.getFlowsList().stream().map(FlowResult::getFlow).filter(f -> f.getKey().getDestName().equals(dest))
                .mapToLong(Flow::getPacketsIn).sum();
    }

    @Test
    void aRestartWithoutPersistenceLosesNothingTheReplayRestoresEveryReport() throws Exception {
        long t = bucketStart();
        int port;
        try (GoldmaneClient c = client(startAndKeepPort(), 1000)) {
            InProcessGoldmane g1 = new InProcessGoldmane(portOf(c), null);
            port = g1.port();
            c.submit(List.of(flow("api", t, 3), flow("web", t, 5)));
            await("acks for 2", c::acked, n -> n >= 2);
            assertThat(packets(g1.list(), "api")).isEqualTo(3);
            g1.close();
            await("client sees goldmane gone", c::connected, up -> !up);
            c.submit(List.of(flow("db", t, 7)));  // while goldmane is away
            try (InProcessGoldmane g2 = new InProcessGoldmane(port, null)) {
                await("replay acknowledged", c::acked, n -> n >= 3);
                FlowListResult r = g2.list();
                assertThat(packets(r, "api")).isEqualTo(3);
                assertThat(packets(r, "web")).isEqualTo(5);
                assertThat(packets(r, "db")).isEqualTo(7);
                assertThat(r.getMetaOrBuilder().getTotalResults()).isEqualTo(3);
                assertThat(c.connects()).isGreaterThanOrEqualTo(2);
                assertThat(c.lastSeq()).as("replays keep their sequence numbers").isEqualTo(3);
            }
        }
    }

    @Test
    void aRestartFromSnapshotsCountsTheReplayedReportsOnce(@TempDir Path dir) throws Exception {
        long t = bucketStart();
        try (GoldmaneClient c = client(startAndKeepPort(), 1000)) {
            InProcessGoldmane g1 = new InProcessGoldmane(portOf(c), dir);
            int port = g1.port();
            c.submit(List.of(flow("api", t, 3)));
            await("ack", c::acked, n -> n >= 1);
            g1.close(); // graceful: the open bucket is on disk, claims included
            await("client sees goldmane gone", c::connected, up -> !up);
            c.submit(List.of(flow("api", t + 15, 4)));
            try (InProcessGoldmane g2 = new InProcessGoldmane(port, dir)) {
                await("replay acknowledged", c::acked, n -> n >= 2);
                assertThat(packets(g2.list(), "api")).as("3 once (not 6) + 4").isEqualTo(7);
                // One more reconnect replays both again: still counted once.
                assertThat(c.sent()).isGreaterThanOrEqualTo(3);
            }
        }
    }

    @Test
    void mutualTlsFromFilesReachesGoldmaneAndACertificateFromAnotherCaDoesNot(@TempDir Path dir) throws Exception {
        TestCertificates certs = TestCertificates.generate(dir.resolve("good"));
        TestCertificates otherCa = TestCertificates.generate(dir.resolve("other"));
        long t = bucketStart();
        try (InProcessGoldmane g = new InProcessGoldmane(0, null, certs);
                GoldmaneClient good = tlsClient(g.target(), certs);
                GoldmaneClient foreign = tlsClient(g.target(), otherCa)) {
            good.submit(List.of(flow("api", t, 3)));
            foreign.submit(List.of(flow("web", t, 5)));
            await("ack over mTLS", good::acked, n -> n >= 1);
            assertThat(packets(g.list(), "api")).isEqualTo(3);
            // The foreign client's handshakes fail (it retries every 100 ms): once two of its
            // streams have ended, its report stays cached, never acknowledged, never stored.
            await("two of the foreign client's streams ended", foreign::streamErrors, n -> n >= 2);
            assertThat(foreign.acked()).isZero();
            assertThat(foreign.cached()).isEqualTo(1);
            assertThat(packets(g.list(), "web")).isZero();
        }
    }

    private static GoldmaneClient tlsClient(String target, TestCertificates c) {
        return new GoldmaneClient(new GoldmaneClient.Settings(target, "node-a",
                new ClientCertificate(c.caCert(), c.clientCert(), c.clientKey()), Duration.ofMinutes(5), 1000,
                Duration.ofMillis(100)), Clock.systemUTC());
    }

    @Test
    void theCacheIsBoundedDroppingTheOldestAndCountingThem() throws Exception {
        long t = bucketStart();
        try (GoldmaneClient c = client("127.0.0.1:1", 2)) {
            c.submit(List.of(flow("a", t, 1), flow("b", t, 1), flow("c", t, 1)));
            assertThat(c.cached()).isEqualTo(2);
            assertThat(c.dropped()).isEqualTo(1);
        }
    }

    // The client is created first with a reserved port, goldmane then binds it.
    private int reserved;

    private String startAndKeepPort() throws java.io.IOException {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            reserved = s.getLocalPort();
        }
        return "127.0.0.1:" + reserved;
    }

    private int portOf(GoldmaneClient c) {
        return reserved;
    }
}
