package calico.libcalico.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The debug profile port over real HTTP: Go's pprof paths answered with the JVM's own views. */
class DebugProfileServerTest {

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final DebugProfileServer server = new DebugProfileServer("127.0.0.1", 0, "test.debugPort");
    private final CountDownLatch release = new CountDownLatch(1);

    @BeforeEach
    void start() {
        server.start();
    }

    @AfterEach
    void stop() {
        release.countDown();
        server.stop();
    }

    @Test
    void theIndexListsWhatIsServedAndAnUnknownProfileIsNotFound() throws Exception {
        HttpResponse<String> index = get("/debug/pprof/");
        assertThat(index.statusCode()).isEqualTo(200);
        assertThat(index.body()).contains("goroutine", "heap", "profile");

        HttpResponse<String> unknown = get("/debug/pprof/mutex");
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(unknown.body()).contains("mutex");
    }

    @Test
    void goroutineShowsEveryThreadsStackWithWhatItWaitsOn() throws Exception {
        Thread parked = new Thread(this::awaitRelease, "debug-test-parked");
        parked.start();
        while (parked.getState() != Thread.State.WAITING) {
            Thread.onSpinWait();
        }

        HttpResponse<String> dump = get("/debug/pprof/goroutine");

        assertThat(dump.statusCode()).isEqualTo(200);
        assertThat(dump.body()).contains("\"debug-test-parked\"", "WAITING on java.util.concurrent.CountDownLatch",
                "DebugProfileServerTest.awaitRelease", "goroutineShowsEveryThreadsStackWithWhatItWaitsOn");
        release.countDown();
        parked.join();
    }

    @Test
    void heapIsTheClassHistogramOfLiveObjects() throws Exception {
        HttpResponse<String> heap = get("/debug/pprof/heap");

        assertThat(heap.statusCode()).isEqualTo(200);
        assertThat(heap.body()).contains("java.lang.String", "Total");
    }

    @Test
    void profileIsAFlightRecordingOfTheAskedWindow() throws Exception {
        HttpResponse<byte[]> profile = http.send(request("/debug/pprof/profile?seconds=1"),
                HttpResponse.BodyHandlers.ofByteArray());

        assertThat(profile.statusCode()).isEqualTo(200);
        assertThat(Arrays.copyOf(profile.body(), 4)).as("JFR's magic").isEqualTo("FLR\0".getBytes(StandardCharsets.US_ASCII));
    }

    @Test
    void aBadWindowIsRefusedNamingTheParameter() throws Exception {
        assertThat(get("/debug/pprof/profile?seconds=0").body()).contains("seconds: 0 is outside 1-300");
        assertThat(get("/debug/pprof/profile?seconds=soon").statusCode()).isEqualTo(400);
        assertThat(get("/debug/pprof/profile?seconds=soon").body()).contains("seconds: 'soon' is not a whole number");
    }

    @Test
    void aBadPortIsRefusedNamingTheSetting() {
        assertThatThrownBy(() -> new DebugProfileServer("", 70000, "KubeControllersConfiguration default spec.debugProfilePort"))
                .hasMessageContaining("spec.debugProfilePort: 70000 is not a port number");
    }

    private void awaitRelease() {
        try {
            release.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(request(path), HttpResponse.BodyHandlers.ofString());
    }

    private HttpRequest request(String path) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.boundPort() + path)).build();
    }
}
