package calico.launcher.faults;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The connections goldmane recorded for one flow, per reporter, read through whisker-backend's
 * {@code GET /flows} (the API a user reads) one bucket at a time.
 */
final class WhiskerFlows {

    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(3)).build();

    private final URI base;
    private final String token;

    WhiskerFlows(URI base, String token) {
        this.base = base;
        this.token = token;
    }

    /** The flow: source and destination pods (namespace/name), protocol and port. */
    record FlowKey(String source, String dest, String protocol, int port) {
        String filters() {
            return "{\"source_namespaces\":[{\"value\":\"" + ns(source) + "\"}],\"source_names\":[{\"value\":\"" + name(source)
                    + "\"}],\"dest_namespaces\":[{\"value\":\"" + ns(dest) + "\"}],\"dest_names\":[{\"value\":\"" + name(dest)
                    + "\"}],\"protocols\":[{\"value\":\"" + protocol + "\"}],\"dest_ports\":[{\"value\":" + port + "}]}";
        }

        private static String ns(String pod) {
            return pod.substring(0, pod.indexOf('/'));
        }

        private static String name(String pod) {
            return pod.substring(pod.indexOf('/') + 1);
        }
    }

    /** {@return connections started in {@code [from, to)} (epoch ms, whole seconds), per reporter (Src, Dst)}. */
    Map<String, Long> connections(FlowKey key, long from, long to) {
        String query = "startTimeGte=" + from / 1000 + "&startTimeLt=" + to / 1000 + "&pageSize=1000&filters="
                + URLEncoder.encode(key.filters(), StandardCharsets.UTF_8);
        HttpRequest req = HttpRequest.newBuilder(base.resolve("/flows?" + query)).timeout(Duration.ofSeconds(10))
                .header("Authorization", "Bearer " + token).GET().build();
        HttpResponse<String> resp;
        try {
            resp = HTTP.send(req, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new IllegalStateException("whisker GET /flows: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        if (resp.statusCode() != 200) {
            throw new IllegalStateException("whisker GET /flows answered " + resp.statusCode() + ": " + resp.body());
        }
        return perReporter(resp.body());
    }

    /** Sums {@code num_connections_started} per {@code reporter} over a {@code GET /flows} answer's items. */
    static Map<String, Long> perReporter(String body) {
        Map<String, Long> out = new TreeMap<>();
        Object items = ((Map<?, ?>) Json.parse(body)).get("items");
        if (items instanceof List<?> list) {
            for (Object o : list) {
                Map<?, ?> f = (Map<?, ?>) o;
                Object n = f.get("num_connections_started");
                out.merge(String.valueOf(f.get("reporter")), n instanceof Number x ? x.longValue() : 0L, Long::sum);
            }
        }
        return out;
    }
}
