package calico.felix.app;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.function.Predicate;

/** HTTP against felix's local ports, as the kubelet, Prometheus or an operator would call them. */
final class LocalHttp {

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final ObjectMapper json = new ObjectMapper();
    private final Duration wait;

    /** @param wait how long {@link #awaitJson} keeps asking */
    LocalHttp(Duration wait) {
        this.wait = wait;
    }

    HttpResponse<String> get(int port, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).GET()
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** {@return the JSON body of a GET that must answer 200} */
    JsonNode getJson(int port, String path) throws Exception {
        HttpResponse<String> r = get(port, path);
        assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(200);
        return json.readTree(r.body());
    }

    /** Asks until {@code path} answers {@code status} with a body meeting {@code condition}. */
    JsonNode awaitJson(int port, String path, int status, Predicate<JsonNode> condition) throws Exception {
        long deadline = System.nanoTime() + wait.toNanos();
        HttpResponse<String> last = null;
        while (System.nanoTime() < deadline) {
            last = get(port, path);
            if (last.statusCode() == status && condition.test(json.readTree(last.body()))) {
                return json.readTree(last.body());
            }
            Thread.sleep(50);
        }
        throw new AssertionError("timed out waiting for " + status + " from " + path + "; last: "
                + (last == null ? null : last.statusCode() + " " + last.body()));
    }
}
