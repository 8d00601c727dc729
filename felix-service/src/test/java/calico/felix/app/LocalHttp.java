package calico.felix.app;

import static org.assertj.core.api.Assertions.assertThat;

import calico.libcalico.testing.Await;
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
    JsonNode awaitJson(int port, String path, int status, Predicate<JsonNode> condition) {
        return Await.until(status + " from " + path, wait, () -> answer(port, path),
                a -> a.status() == status && a.json() != null && condition.test(a.json())).json();
    }

    /** A response as the failure of {@link #awaitJson} shows it: status and body. */
    private record Answer(int status, String body, JsonNode json) {
        @Override
        public String toString() {
            return status + " " + body;
        }
    }

    private Answer answer(int port, String path) throws Exception {
        HttpResponse<String> r = get(port, path);
        JsonNode parsed;
        try {
            parsed = json.readTree(r.body());
        } catch (java.io.IOException e) {
            parsed = null; // not JSON: no condition holds
        }
        return new Answer(r.statusCode(), r.body(), parsed);
    }
}
