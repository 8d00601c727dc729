package calico.apiserver.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import calico.apiserver.http.Http;
import calico.libcalico.testing.EtcdServerExtension;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kubectl scenarios against a real etcd (libcalico's test etcd). */
class KubectlEtcdTest extends KubectlScenarios {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    static ApiServerFixture server;

    @BeforeAll
    static void start() {
        server = ApiServerFixture.start(ETCD.endpoint().toString());
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void watchFromACompactedVersionEndsWith410Expired() throws Exception {
        Http http = new Http(server.url(), ApiServerFixture.ADMIN_TOKEN);
        String path = "/apis/projectcalico.org/v3/globalnetworksets";
        String body = "{\"apiVersion\":\"projectcalico.org/v3\",\"kind\":\"GlobalNetworkSet\","
                + "\"metadata\":{\"name\":\"compacted\"},\"spec\":{\"nets\":[\"10.0.0.0/8\"]}}";
        ObjectMapper json = new ObjectMapper();
        String rv = json.readTree(http.post(path, "application/json", body).body()).path("metadata")
                .path("resourceVersion").asText();
        for (int i = 0; i < 3; i++) {
            http.patch(path + "/compacted", "application/merge-patch+json", "{\"metadata\":{\"labels\":{\"i\":\"" + i + "\"}}}");
        }
        ETCD.compact();
        var resp = http.stream(http.request(path + "?watch=1&resourceVersion=" + rv));
        assertThat(resp.statusCode()).isEqualTo(200);
        try (var in = new BufferedReader(new InputStreamReader(resp.body(), StandardCharsets.UTF_8))) {
            JsonNode ev = json.readTree(Http.nextEvent(in));
            assertThat(ev.path("type").asText()).isEqualTo("ERROR");
            assertThat(ev.path("object").path("code").asInt()).isEqualTo(410);
            assertThat(ev.path("object").path("reason").asText()).isEqualTo("Expired");
            assertThat(ev.path("object").path("message").asText()).startsWith("too old resource version: " + rv);
        }
    }

    @Test
    void aContinueTokenFromACompactedRevisionIs410WithATokenForTheRest() throws Exception {
        Http http = new Http(server.url(), ApiServerFixture.ADMIN_TOKEN);
        String path = "/apis/projectcalico.org/v3/globalnetworksets";
        ObjectMapper json = new ObjectMapper();
        for (String n : new String[] {"cont-a", "cont-b", "cont-c"}) {
            http.post(path, "application/json", "{\"apiVersion\":\"projectcalico.org/v3\",\"kind\":\"GlobalNetworkSet\","
                    + "\"metadata\":{\"name\":\"" + n + "\",\"labels\":{\"cont\":\"yes\"}},\"spec\":{\"nets\":[\"10.0.0.0/8\"]}}");
        }
        String q = path + "?labelSelector=cont%3Dyes&limit=1";
        JsonNode first = json.readTree(http.get(q).body());
        String token = first.path("metadata").path("continue").asText();
        http.delete(path + "/cont-b");
        // Before compaction the next page still shows cont-b: etcd reads the first page's revision.
        assertThat(json.readTree(http.get(q + "&continue=" + token).body()).path("items").get(0).path("metadata")
                .path("name").asText()).isEqualTo("cont-b");
        ETCD.compact();
        var gone = http.get(q + "&continue=" + token);
        assertThat(gone.statusCode()).isEqualTo(410);
        JsonNode status = json.readTree(gone.body());
        assertThat(status.path("reason").asText()).isEqualTo("Expired");
        assertThat(status.path("message").asText()).startsWith("The provided continue parameter is too old to display a "
                + "consistent list result.");
        JsonNode rest = json.readTree(http.get(q.replace("limit=1", "limit=5") + "&continue="
                + status.path("metadata").path("continue").asText()).body());
        assertThat(rest.path("items").size()).isEqualTo(1);
        assertThat(rest.path("items").get(0).path("metadata").path("name").asText()).isEqualTo("cont-c");
    }

    @Override
    ApiServerFixture server() {
        return server;
    }
}
