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

    @Override
    ApiServerFixture server() {
        return server;
    }
}
