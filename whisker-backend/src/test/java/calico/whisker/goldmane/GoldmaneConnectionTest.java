package calico.whisker.goldmane;

import static org.assertj.core.api.Assertions.assertThat;

import calico.goldmane.server.GoldmaneTls;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.TestCertificates;
import calico.whisker.testing.RealGoldmane;
import calico.whisker.testing.Whisker;
import io.grpc.TlsChannelCredentials;
import java.io.File;
import java.net.ServerSocket;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** The goldmane connection: down → 503 and not ready; up → ready; mutual TLS with the three files. */
class GoldmaneConnectionTest {

    static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    Path dir;

    static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    static void awaitStatus(Whisker w, String path, int status) throws Exception {
        try {
            Await.until(path + " answers " + status, Duration.ofSeconds(20), () -> statusOf(w, path) == status);
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + ": " + w.health(path).body(), e);
        }
    }

    /** The status of a health GET, or -1 while nothing answers. */
    private static int statusOf(Whisker w, String path) {
        try {
            return w.health(path).statusCode();
        } catch (Exception e) {
            return -1;
        }
    }

    @Test
    void goldmaneDownIs503AndNotReady() throws Exception {
        try (Whisker w = Whisker.start(dir, "127.0.0.1:" + freePort())) {
            for (String path : new String[] {"/flows", "/flows-filter-hints?type=DestName", "/policies/statistics"}) {
                HttpResponse<String> r = w.get(path);
                assertThat(r.statusCode()).as(path + " " + r.body()).isEqualTo(503);
                JsonNode b = JSON.readTree(r.body());
                assertThat(b.get("error").asString()).isEqualTo("Service Unavailable");
                assertThat(b.get("message").asString()).contains("unreachable");
            }
            assertThat(w.health("/liveness").statusCode()).isEqualTo(200);
            assertThat(w.health("/readiness").statusCode()).isEqualTo(503);
        }
    }

    @Test
    void readyOnceGoldmaneAnsweredWithProbesAndRequestMetricsOnTheHealthPort() throws Exception {
        try (RealGoldmane gm = RealGoldmane.plaintext(); Whisker w = Whisker.start(dir, gm.address())) {
            // No API traffic: the probe alone makes it ready.
            awaitStatus(w, "/readiness", 200);
            assertThat(w.health("/liveness").statusCode()).isEqualTo(200);
            assertThat(w.get("/flows").statusCode()).isEqualTo(200);
            String metrics = w.health("/actuator/prometheus").body();
            assertThat(metrics).contains("http_server_requests_seconds_count{application=\"whisker-backend\"")
                    .contains("uri=\"/flows\"").contains("calico_health_ready{application=\"whisker-backend\"} 1.0");
            // The API port does not serve the probes, and the health port needs no token.
            assertThat(w.get("/readiness").statusCode()).isEqualTo(404);
        }
    }

    @Test
    void aGoldmaneDeadlineIs504() throws Exception {
        try (RealGoldmane gm = RealGoldmane.plaintext();
             Whisker w = Whisker.start(dir, gm.address(), "--whisker.call-timeout=1ns")) {
            HttpResponse<String> r = w.get("/flows");
            assertThat(r.statusCode()).as(r.body()).isEqualTo(504);
            JsonNode b = JSON.readTree(r.body());
            assertThat(b.get("error").asString()).isEqualTo("Gateway Timeout");
            assertThat(b.get("message").asString()).contains("did not answer in time");
        }
    }

    @Test
    void mutualTlsTowardsGoldmane() throws Exception {
        TestCertificates certs = TestCertificates.generate(dir.resolve("certs"));
        var feed = TlsChannelCredentials.newBuilder().trustManager(new File(certs.caCert().toString()))
                .keyManager(new File(certs.clientCert().toString()), new File(certs.clientKey().toString())).build();
        try (RealGoldmane gm = new RealGoldmane(GoldmaneTls.serverCredentials(certs.serverCert().toString(),
                certs.serverKey().toString(), certs.caCert().toString()), feed, 1000)) {
            try (Whisker w = Whisker.start(dir, gm.address(), "--whisker.ca-cert-path=" + certs.caCert(),
                    "--whisker.tls-cert-path=" + certs.clientCert(), "--whisker.tls-key-path=" + certs.clientKey())) {
                HttpResponse<String> r = w.get("/flows");
                assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            }
            // Plaintext against a TLS goldmane fails as unreachable.
            try (Whisker w = Whisker.start(dir, gm.address())) {
                assertThat(w.get("/flows").statusCode()).isEqualTo(503);
            }
        }
    }
}
