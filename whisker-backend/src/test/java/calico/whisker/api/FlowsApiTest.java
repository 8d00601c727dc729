package calico.whisker.api;

import static calico.whisker.testing.Flows.flow;
import static calico.whisker.testing.Flows.hit;
import static calico.whisker.testing.Flows.key;
import static calico.whisker.testing.Whisker.enc;
import static org.assertj.core.api.Assertions.assertThat;

import calico.libcalico.goldmane.proto.Action;
import calico.libcalico.goldmane.proto.PolicyKind;
import calico.libcalico.goldmane.proto.PolicyTrace;
import calico.libcalico.goldmane.proto.Reporter;
import calico.whisker.testing.RealGoldmane;
import calico.whisker.testing.Whisker;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * GET /flows (JSON) and /flows-filter-hints against a real goldmane fed four flow keys over two
 * buckets: every filter key, sort keys, pages, time ranges, and the response shape.
 *
 * <pre>
 * bucket 0: A demo-a/client- → demo-b/api- :8080 tcp Allow Dst  10 pkts
 *           B demo-a/client- → demo-c/db-  :5432 tcp Deny  Dst   3 pkts
 *           C kube-system/dns- → demo-b/api- :53 udp Allow Src   7 pkts, pending trace: staged Deny
 * bucket 1: A again 5 pkts
 *           D demo-c/batch- → demo-a/web- :80 tcp Allow Dst, trace: security/gnp-pass Pass, then allow-web-
 * </pre>
 */
class FlowsApiTest {

    static final JsonMapper JSON = JsonMapper.builder().build();
    static final long B0 = RealGoldmane.T0 - 1;
    static final long B1 = B0 + 15;

    @TempDir
    static Path dir;
    static RealGoldmane gm;
    static Whisker whisker;

    @BeforeAll
    static void start() throws Exception {
        gm = RealGoldmane.plaintext();
        var staged = PolicyTrace.newBuilder()
                .addEnforcedPolicies(hit(PolicyKind.CalicoNetworkPolicy, "default", "demo-b", "allow-api-", Action.Allow, 0))
                .addPendingPolicies(hit(PolicyKind.StagedNetworkPolicy, "default", "demo-b", "staged-deny", Action.Deny, 0));
        gm.feed(List.of(
                flow(key("demo-a", "client-", "demo-b", "api-", 8080, Action.Allow), gm.now(), 10, 1000),
                flow(key("demo-a", "client-", "demo-c", "db-", 5432, Action.Deny), gm.now(), 3, 300),
                flow(key("kube-system", "dns-", "demo-b", "api-", 53, Action.Allow).setProto("udp")
                        .setReporter(Reporter.Src).setPolicies(staged), gm.now(), 7, 700)));
        gm.advance(Duration.ofSeconds(15));
        var passThenAllow = PolicyTrace.newBuilder()
                .addEnforcedPolicies(hit(PolicyKind.GlobalNetworkPolicy, "security", "", "gnp-pass", Action.Pass, 0))
                .addEnforcedPolicies(hit(PolicyKind.CalicoNetworkPolicy, "default", "demo-a", "allow-web-", Action.Allow, 0));
        gm.feed(List.of(
                flow(key("demo-a", "client-", "demo-b", "api-", 8080, Action.Allow), gm.now(), 5, 500),
                flow(key("demo-c", "batch-", "demo-a", "web-", 80, Action.Allow).setPolicies(passThenAllow)
                        .setPartial(true), gm.now(),
                        2, 200)));
        gm.advance(Duration.ofSeconds(15));
        whisker = Whisker.start(dir, gm.address());
    }

    @AfterAll
    static void stop() {
        if (whisker != null) {
            whisker.close();
        }
        gm.close();
    }

    static JsonNode ok(String pathAndQuery) throws Exception {
        HttpResponse<String> r = whisker.get(pathAndQuery);
        assertThat(r.statusCode()).as(pathAndQuery + " → " + r.body()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(v -> assertThat(v).startsWith(
                "application/json"));
        return JSON.readTree(r.body());
    }

    static List<String> pairs(JsonNode page) {
        List<String> out = new ArrayList<>();
        page.get("items").forEach(i -> out.add(i.get("source_name").asString() + ">" + i.get("dest_name").asString()));
        return out;
    }

    static JsonNode withFilter(String json) throws Exception {
        return ok("/flows?filters=" + enc(json));
    }

    @Test
    void listsEveryKeyWithTotalsAndTheDocumentedShape() throws Exception {
        JsonNode page = ok("/flows");
        assertThat(page.get("meta").get("totalResults").asLong()).isEqualTo(4);
        assertThat(page.get("meta").get("totalPages").asLong()).isEqualTo(1);
        assertThat(pairs(page)).containsExactlyInAnyOrder("client->api-", "client->db-", "dns->api-", "batch->web-");
        JsonNode a = null;
        for (JsonNode i : page.get("items")) {
            if (i.get("dest_name").asString().equals("api-") && i.get("source_name").asString().equals("client-")) {
                a = i;
            }
        }
        assertThat(a).isNotNull();
        assertThat(a.get("id").isString()).isTrue();
        assertThat(a.get("start_time").asString()).isEqualTo("2023-11-14T22:13:15Z");
        assertThat(a.get("end_time").asString()).isEqualTo("2023-11-14T22:13:45Z");
        assertThat(a.get("action").asString()).isEqualTo("Allow");
        assertThat(a.get("source_namespace").asString()).isEqualTo("demo-a");
        assertThat(a.get("source_type").asString()).isEqualTo("WorkloadEndpoint");
        assertThat(a.get("dest_namespace").asString()).isEqualTo("demo-b");
        assertThat(a.get("source_labels").get(0).asString()).isEqualTo("app=client-");
        assertThat(a.get("dest_labels").get(0).asString()).isEqualTo("app=api-");
        assertThat(a.get("protocol").asString()).isEqualTo("tcp");
        assertThat(a.get("dest_port").asLong()).isEqualTo(8080);
        assertThat(a.get("reporter").asString()).isEqualTo("Dst");
        assertThat(a.get("packets_in").asLong()).isEqualTo(15);
        assertThat(a.get("bytes_out").asLong()).isEqualTo(1500);
        assertThat(a.get("num_connections_started").asLong()).isEqualTo(2);
        assertThat(a.get("source_ips").get(0).asString()).isEqualTo("10.0.0.1");
        assertThat(a.get("dest_ips").get(0).asString()).isEqualTo("10.0.1.1");
        assertThat(a.has("dest_service_name")).isTrue();
        assertThat(a.get("partial").asBoolean()).as("a complete record").isFalse();
        JsonNode partial = null;
        for (JsonNode i : page.get("items")) {
            if (i.get("source_name").asString().equals("batch-")) {
                partial = i;
            }
        }
        assertThat(partial.get("partial").asBoolean()).as("felix's partial mark passes through goldmane").isTrue();
        JsonNode p = a.get("policies").get("enforced").get(0);
        assertThat(p.get("kind").asString()).isEqualTo("CalicoNetworkPolicy");
        assertThat(p.get("name").asString()).isEqualTo("allow-api-");
        assertThat(p.get("namespace").asString()).isEqualTo("demo-b");
        assertThat(p.get("tier").asString()).isEqualTo("default");
        assertThat(p.get("action").asString()).isEqualTo("Allow");
        assertThat(p.get("policy_index").asLong()).isZero();
        assertThat(p.get("rule_index").asLong()).isZero();
        assertThat(p.has("trigger")).isTrue();
        assertThat(p.get("trigger").isNull()).isTrue();
        assertThat(a.get("policies").get("pending").isArray()).isTrue();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "{\"source_names\":[{\"type\":\"Exact\",\"value\":\"client-\"}]}|client->api-,client->db-",
            "{\"source_names\":[{\"type\":\"Fuzzy\",\"value\":\"lien\"}]}|client->api-,client->db-",
            "{\"source_names\":[{\"value\":\"lien\"}]}|",
            "{\"source_namespaces\":[{\"value\":\"kube-system\"}]}|dns->api-",
            "{\"dest_names\":[{\"value\":\"db-\"}]}|client->db-",
            "{\"dest_namespaces\":[{\"type\":\"Fuzzy\",\"value\":\"mo-b\"}]}|client->api-,dns->api-",
            "{\"protocols\":[{\"value\":\"udp\"}]}|dns->api-",
            "{\"dest_ports\":[{\"type\":\"Exact\",\"value\":5432},{\"value\":80}]}|client->db-,batch->web-",
            "{\"actions\":[\"Deny\"]}|client->db-",
            "{\"pending_actions\":[\"Deny\"]}|client->db-,dns->api-",
            "{\"reporters\":[\"Src\"]}|dns->api-",
            "{\"policies\":[{\"tier\":\"security\"}]}|batch->web-",
            "{\"policies\":[{\"kind\":\"StagedNetworkPolicy\"}]}|dns->api-",
            "{\"policies\":[{\"name\":\"allow-db-\",\"action\":\"Deny\",\"namespace\":\"demo-c\",\"kind\":\"\"}]}|client->db-",
            "{\"source_namespaces\":[{\"value\":\"demo-a\"}],\"actions\":[\"Allow\"]}|client->api-",
            "{}|client->api-,client->db-,dns->api-,batch->web-"})
    void eachFilterKeyIsPassedToGoldmane(String filters, String expected) throws Exception {
        List<String> want = expected == null ? List.of() : List.of(expected.split(","));
        JsonNode page = withFilter(filters);
        assertThat(pairs(page)).containsExactlyInAnyOrderElementsOf(want);
        assertThat(page.get("meta").get("totalResults").asLong()).isEqualTo(want.size());
    }

    @Test
    void sortKeysOrderTheResults() throws Exception {
        assertThat(pairs(ok("/flows?sortBy=SourceName"))).containsExactly("batch->web-", "client->api-",
                "client->db-", "dns->api-");
        assertThat(pairs(ok("/flows?sortBy=DestName")).get(0)).isEqualTo("client->api-");
        assertThat(pairs(ok("/flows?sortBy=DestName")).get(3)).isEqualTo("batch->web-");
        assertThat(pairs(ok("/flows?sortBy=SourceNamespace")).get(0)).startsWith("client->");
        assertThat(pairs(ok("/flows?sortBy=SourceNamespace")).get(3)).isEqualTo("dns->api-");
        assertThat(pairs(ok("/flows?sortBy=DestNamespace")).get(0)).isEqualTo("batch->web-");
        // Time: newest first; the key that starts in bucket 1 comes first.
        assertThat(pairs(ok("/flows?sortBy=Time")).get(0)).isEqualTo("batch->web-");
        assertThat(pairs(ok("/flows")).get(0)).isEqualTo("batch->web-");
        assertThat(ok("/flows?sortBy=DestType").get("meta").get("totalResults").asLong()).isEqualTo(4);
        assertThat(ok("/flows?sortBy=SourceType").get("meta").get("totalResults").asLong()).isEqualTo(4);
    }

    @Test
    void pagesCarryTotalsOfTheWholeResult() throws Exception {
        JsonNode p0 = ok("/flows?sortBy=SourceName&pageSize=3&page=0");
        JsonNode p1 = ok("/flows?sortBy=SourceName&pageSize=3&page=1");
        assertThat(pairs(p0)).containsExactly("batch->web-", "client->api-", "client->db-");
        assertThat(pairs(p1)).containsExactly("dns->api-");
        for (JsonNode p : List.of(p0, p1)) {
            assertThat(p.get("meta").get("totalResults").asLong()).isEqualTo(4);
            assertThat(p.get("meta").get("totalPages").asLong()).isEqualTo(2);
        }
        assertThat(pairs(ok("/flows?pageSize=3&page=5"))).isEmpty();
    }

    @Test
    void timeRangesSelectBuckets() throws Exception {
        assertThat(pairs(ok("/flows?startTimeGte=" + B1))).containsExactlyInAnyOrder("client->api-", "batch->web-");
        JsonNode old = ok("/flows?startTimeGte=" + B0 + "&startTimeLt=" + B1 + "&filters="
                + enc("{\"dest_ports\":[{\"value\":8080}]}"));
        assertThat(old.get("items").get(0).get("packets_in").asLong()).isEqualTo(10);
        assertThat(pairs(ok("/flows?startTimeLt=" + B1))).hasSize(3);
        // Relative: the last 20 s (goldmane's now is in bucket 2) reach back into bucket 1 only.
        assertThat(pairs(ok("/flows?startTimeGte=-20"))).containsExactlyInAnyOrder("client->api-", "batch->web-");
    }

    @Test
    void filterHintsListDistinctValues() throws Exception {
        JsonNode ns = ok("/flows-filter-hints?type=SourceNamespace");
        assertThat(ns.get("items").findValuesAsString("value")).containsExactly("demo-a", "demo-c", "kube-system");
        assertThat(ns.get("meta").get("totalResults").asLong()).isEqualTo(3);
        assertThat(ok("/flows-filter-hints?type=PolicyTier").get("items").findValuesAsString("value"))
                .containsExactly("default", "security");
        assertThat(ok("/flows-filter-hints?type=PolicyName&filters=" + enc("{\"reporters\":[\"Src\"]}"))
                .get("items").findValuesAsString("value")).containsExactly("allow-api-", "staged-deny");
        assertThat(ok("/flows-filter-hints?type=DestName&startTimeGte=" + B1).get("items")
                .findValuesAsString("value")).containsExactly("api-", "web-");
        JsonNode paged = ok("/flows-filter-hints?type=DestNamespace&pageSize=2&page=1");
        assertThat(paged.get("items").findValuesAsString("value")).containsExactly("demo-c");
        assertThat(paged.get("meta").get("totalPages").asLong()).isEqualTo(2);
        assertThat(ok("/flows-filter-hints?type=PolicyNamespace").get("items").findValuesAsString("value"))
                .contains("demo-a", "demo-b");
        assertThat(ok("/flows-filter-hints?type=SourceName").get("items").findValuesAsString("value"))
                .containsExactly("batch-", "client-", "dns-");
    }

    @Test
    void policyStatisticsPerPolicyPerRuleAndAsTimeSeries() throws Exception {
        JsonNode all = ok("/policies/statistics");
        JsonNode api = find(all, "allow-api-", null);
        assertThat(api.get("direction").asString()).isEqualTo("Any");
        assertThat(api.get("group_by").asString()).isEqualTo("Policy");
        assertThat(api.get("type").asString()).isEqualTo("PacketCount");
        assertThat(api.get("allowed_in").get(0).asLong()).isEqualTo(22);
        assertThat(api.get("denied_in").get(0).asLong()).isZero();
        assertThat(api.get("x").size()).isZero();
        assertThat(find(all, "gnp-pass", null).get("passed_in").get(0).asLong()).isEqualTo(2);
        assertThat(find(all, "allow-db-", null).get("denied_in").get(0).asLong()).isEqualTo(3);

        JsonNode rules = ok("/policies/statistics?groupBy=PolicyRule&type=ByteCount&name=allow-api-");
        assertThat(rules.get("items").size()).isEqualTo(2);
        assertThat(find(rules, "allow-api-", "Ingress").get("allowed_in").get(0).asLong()).isEqualTo(1500);
        assertThat(find(rules, "allow-api-", "Egress").get("allowed_out").get(0).asLong()).isEqualTo(700);
        assertThat(find(rules, "allow-api-", "Ingress").get("policy").get("rule_index").asLong()).isZero();

        JsonNode series = ok("/policies/statistics?timeSeries=true&startTimeGte=" + B0 + "&startTimeLt=" + (B1 + 15)
                + "&kind=CalicoNetworkPolicy&namespace=demo-b&tier=default");
        JsonNode s = find(series, "allow-api-", null);
        assertThat(List.of(s.get("allowed_in").get(0).asLong(), s.get("allowed_in").get(1).asLong()))
                .containsExactly(17L, 5L);
        assertThat(s.get("x").get(0).asString()).isEqualTo("2023-11-14T22:13:15Z");
        assertThat(s.get("x").get(1).asString()).isEqualTo("2023-11-14T22:13:30Z");
        assertThat(series.get("items").size()).isEqualTo(1);
        assertThat(ok("/policies/statistics?action=Deny&groupBy=PolicyRule").get("items").size()).isEqualTo(1);
        assertThat(ok("/policies/statistics?type=LiveConnectionCount").get("items").size()).isGreaterThan(0);
    }

    private static JsonNode find(JsonNode items, String name, String direction) {
        for (JsonNode i : items.get("items")) {
            if (i.get("policy").get("name").asString().equals(name)
                    && (direction == null || i.get("direction").asString().equals(direction))) {
                return i;
            }
        }
        throw new AssertionError("no statistics for " + name + " " + direction + " in " + items);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
            "/flows?filters=%7Bnot-json|filters|not valid JSON",
            "/flows?filters=%5B%5D|filters|must be a JSON object",
            "/flows?filters=%7B%22bogus%22%3A%5B%5D%7D|filters|bogus: unknown key",
            "/flows?filters=%7B%22actions%22%3A%5B%22Maybe%22%5D%7D|filters|actions[0]: 'Maybe' is not one of Allow, Deny, Pass",
            "/flows?filters=%7B%22reporters%22%3A%22Src%22%7D|filters|reporters: must be an array",
            "/flows?filters=%7B%22dest_ports%22%3A%5B%7B%22value%22%3A%2280%22%7D%5D%7D|filters|dest_ports[0].value: must be an integer",
            "/flows?filters=%7B%22dest_ports%22%3A%5B%7B%22type%22%3A%22Fuzzy%22%2C%22value%22%3A80%7D%5D%7D|filters|dest_ports[0].type",
            "/flows?filters=%7B%22source_names%22%3A%5B%7B%22type%22%3A%22Like%22%2C%22value%22%3A%22a%22%7D%5D%7D|filters|source_names[0].type: 'Like'",
            "/flows?filters=%7B%22source_names%22%3A%5B%7B%22value%22%3A%22a%22%2C%22x%22%3A1%7D%5D%7D|filters|source_names[0].x: unknown key",
            "/flows?filters=%7B%22policies%22%3A%5B%7B%22kind%22%3A%22Bogus%22%7D%5D%7D|filters|policies[0].kind",
            "/flows?filters=%7B%22actions%22%3A%5B%5D%2C%22actions%22%3A%5B%5D%7D|filters|not valid JSON",
            "/flows?page=-1|page|page: -1 is less than 0",
            "/flows?pageSize=-5|pageSize|pageSize: -5 is less than 1",
            "/flows?pageSize=0|pageSize|pageSize: 0 is less than 1",
            "/flows?page=two|page|'two' is not an integer",
            "/flows?sortBy=Bytes|sortBy|sortBy: 'Bytes' is not one of",
            "/flows?watch=maybe|watch|watch: 'maybe' is not true or false",
            "/flows?startTimeGte=yesterday|startTimeGte|not an integer number of seconds",
            "/flows?startTimeLt=1.5|startTimeLt|not an integer number of seconds",
            "/flows?watch=true&page=1|page|not allowed with watch=true",
            "/flows?watch=true&pageSize=10|pageSize|not allowed with watch=true",
            "/flows?watch=true&sortBy=Time|sortBy|not allowed with watch=true",
            "/flows?watch=true&filters=%7B%22x%22%3A1%7D|filters|x: unknown key",
            "/flows-filter-hints|type|type: required",
            "/flows-filter-hints?type=Port|type|type: 'Port' is not one of DestName, DestNamespace, PolicyName",
            "/flows-filter-hints?type=DestName&page=-2|page|page: -2",
            "/policies/statistics?type=Flows|type|type: 'Flows' is not one of ByteCount, LiveConnectionCount, PacketCount",
            "/policies/statistics?groupBy=Tier|groupBy|groupBy: 'Tier'",
            "/policies/statistics?timeSeries=yes|timeSeries|timeSeries: 'yes'",
            "/policies/statistics?kind=Rule|kind|kind: 'Rule'",
            "/policies/statistics?action=Drop|action|action: 'Drop'"})
    void badInputIs400NamingTheParameter(String pathAndQuery, String parameter, String message) throws Exception {
        HttpResponse<String> r = whisker.get(pathAndQuery);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
        JsonNode body = JSON.readTree(r.body());
        assertThat(body.get("status").asInt()).isEqualTo(400);
        assertThat(body.get("error").asString()).isEqualTo("Bad Request");
        assertThat(body.get("parameter").asString()).isEqualTo(parameter);
        assertThat(body.get("message").asString()).startsWith(parameter + ":").contains(message);
    }

    @Test
    void goldmaneInvalidArgumentIsPassedOnAs400() throws Exception {
        HttpResponse<String> big = whisker.get("/flows?pageSize=5000");
        assertThat(big.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(big.body()).get("message").asString()).startsWith("goldmane rejected the request: ")
                .contains("page_size");
        HttpResponse<String> empty = whisker.get("/flows?filters=" + enc("{\"dest_names\":[{\"value\":\"\"}]}"));
        assertThat(empty.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(empty.body()).get("message").asString()).contains("dest_names");
        HttpResponse<String> port = whisker.get("/flows?filters=" + enc("{\"dest_ports\":[{\"value\":70000}]}"));
        assertThat(port.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(port.body()).get("message").asString()).contains("70000");
    }
}
