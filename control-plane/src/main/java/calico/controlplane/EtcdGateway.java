package calico.controlplane;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * etcd's JSON gateway to its gRPC API ({@code /v3/kv/...}), enough to read the current revision
 * and compact to it without an etcd client library.
 */
final class EtcdGateway {

    private static final Pattern REVISION = Pattern.compile("\"revision\"\\s*:\\s*\"?(\\d+)");

    private final URI endpoint;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    EtcdGateway(URI endpoint) {
        this.endpoint = endpoint;
    }

    long compactToCurrent() {
        // A range over an empty key reads nothing but the header, which carries the revision.
        String header = post("/v3/kv/range", "{\"key\":\"AA==\"}");
        Matcher m = REVISION.matcher(header);
        if (!m.find()) {
            throw new IllegalStateException("etcd at " + endpoint + " answered no revision: " + header);
        }
        long revision = Long.parseLong(m.group(1));
        post("/v3/kv/compaction", "{\"revision\":\"" + revision + "\",\"physical\":true}");
        return revision;
    }

    private String post(String path, String json) {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(endpoint.resolve(path)).timeout(Duration.ofSeconds(30))
                    .POST(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new IllegalStateException("etcd " + path + " answered " + r.statusCode() + ": " + r.body());
            }
            return r.body();
        } catch (IOException e) {
            throw new IllegalStateException("etcd " + path + " at " + endpoint + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted calling etcd", e);
        }
    }
}
