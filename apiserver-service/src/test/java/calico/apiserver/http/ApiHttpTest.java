package calico.apiserver.http;

import static org.assertj.core.api.Assertions.assertThat;

import calico.apiserver.e2e.ApiServerFixture;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.memory.MemoryDatastore;
import calico.libcalico.testing.Await;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The HTTP contract without kubectl: discovery documents, status codes and {@code Status}
 * bodies for bad input (as kube-apiserver answers them), selectors, paging, dry runs,
 * conflicts, watch, health and metrics. Memory datastore.
 */
class ApiHttpTest {

    static final String GNP = "/apis/projectcalico.org/v3/globalnetworkpolicies";
    static final ObjectMapper JSON = new ObjectMapper();

    static ApiServerFixture server;
    static Http admin;

    @BeforeAll
    static void start() {
        server = ApiServerFixture.start(null);
        admin = new Http(server.url(), ApiServerFixture.ADMIN_TOKEN);
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    static JsonNode json(HttpResponse<String> r) {
        try {
            return JSON.readTree(r.body());
        } catch (Exception e) {
            throw new AssertionError(r.statusCode() + " " + r.body(), e);
        }
    }

    static String gnp(String name, int order) {
        return "{\"apiVersion\":\"projectcalico.org/v3\",\"kind\":\"GlobalNetworkPolicy\",\"metadata\":{\"name\":\""
                + name + "\",\"labels\":{\"o\":\"" + order + "\"}},\"spec\":{\"selector\":\"all()\",\"order\":" + order + "}}";
    }

    static void assertStatus(HttpResponse<String> r, int code, String reason, String message) {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(code);
        JsonNode s = json(r);
        assertThat(s.path("kind").asText()).isEqualTo("Status");
        assertThat(s.path("apiVersion").asText()).isEqualTo("v1");
        assertThat(s.path("status").asText()).isEqualTo("Failure");
        assertThat(s.path("reason").asText()).isEqualTo(reason);
        assertThat(s.path("code").asInt()).isEqualTo(code);
        assertThat(s.path("message").asText()).isEqualTo(message);
    }

    @Test
    void discoveryLegacyAndAggregated() {
        JsonNode groups = json(admin.get("/apis"));
        assertThat(groups.path("kind").asText()).isEqualTo("APIGroupList");
        assertThat(groups.path("groups").get(0).path("preferredVersion").path("groupVersion").asText())
                .isEqualTo("projectcalico.org/v3");
        HttpResponse<String> agg = admin.send(admin.request("/apis").header("Accept",
                "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"));
        assertThat(agg.headers().firstValue("Content-Type").orElse(""))
                .startsWith("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList");
        JsonNode resources = json(agg).path("items").get(0).path("versions").get(0).path("resources");
        // Every kind but the Kubernetes-only ones (KubernetesService is the core API's, not Calico's).
        assertThat(resources.size()).isEqualTo(java.util.Arrays.stream(calico.api.model.ResourceKind.values())
                .filter(k -> !k.kubernetesOnly()).count());
        assertThat(resources.findValuesAsText("resource")).doesNotContain("kubernetesservices");
        JsonNode gnp = null;
        for (JsonNode r : resources) {
            if (r.path("resource").asText().equals("globalnetworkpolicies")) {
                gnp = r;
            }
        }
        assertThat(gnp).isNotNull();
        assertThat(gnp.path("scope").asText()).isEqualTo("Cluster");
        assertThat(gnp.path("shortNames").toString()).isEqualTo("[\"gnp\",\"cgnp\",\"calicoglobalnetworkpolicies\"]");
        // Calico's policy storages publish one empty category; the other kinds publish none.
        assertThat(gnp.path("categories").toString()).isEqualTo("[\"\"]");
        for (JsonNode r : resources) {
            String plural = r.path("resource").asText();
            boolean policy = plural.equals("globalnetworkpolicies") || plural.equals("networkpolicies");
            assertThat(r.has("categories")).as(plural).isEqualTo(policy);
        }
        JsonNode list = json(admin.get("/apis/projectcalico.org/v3"));
        assertThat(list.path("kind").asText()).isEqualTo("APIResourceList");
        assertThat(list.toString()).contains("\"name\":\"networkpolicies\",\"singularName\":\"networkpolicy\",\"namespaced\":true");
        for (JsonNode r : list.path("resources")) {
            String plural = r.path("name").asText();
            boolean policy = plural.equals("globalnetworkpolicies") || plural.equals("networkpolicies");
            assertThat(r.path("categories").toString()).as(plural).isEqualTo(policy ? "[\"\"]" : "");
        }
        assertThat(admin.get("/version").statusCode()).isEqualTo(200);
        assertThat(new Http(server.url(), null).get("/healthz").body()).isEqualTo("ok");
        assertThat(json(admin.get("/openapi/v3")).path("paths").has("apis/projectcalico.org/v3")).isTrue();
        assertThat(json(admin.get("/openapi/v2")).path("definitions").has("org.projectcalico.api.v3.GlobalNetworkPolicy")).isTrue();
    }

    /** CalicoNodeStatus is served as any kind: created, its status written back, a bad spec refused naming the field. */
    @Test
    void calicoNodeStatusIsServed() {
        String path = "/apis/projectcalico.org/v3/caliconodestatuses";
        String request = "{\"apiVersion\":\"projectcalico.org/v3\",\"kind\":\"CalicoNodeStatus\",\"metadata\":"
                + "{\"name\":\"node-1-status\"},\"spec\":{\"node\":\"node-1\",\"classes\":[\"Agent\",\"BGP\"],"
                + "\"updatePeriodSeconds\":10}}";
        HttpResponse<String> created = admin.post(path, "application/json", request);
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        JsonNode stored = json(created);
        ((com.fasterxml.jackson.databind.node.ObjectNode) stored).putObject("status").put("lastUpdated", "2026-12-06T04:30:00Z")
                .putObject("bgp").put("numberEstablishedV4", 1).put("numberNotEstablishedV4", 0)
                .put("numberEstablishedV6", 0).put("numberNotEstablishedV6", 0);
        HttpResponse<String> updated = admin.put(path + "/node-1-status", stored.toString());
        assertThat(updated.statusCode()).as(updated.body()).isEqualTo(200);
        JsonNode back = json(admin.get(path + "/node-1-status"));
        assertThat(back.path("spec").path("classes").toString()).isEqualTo("[\"Agent\",\"BGP\"]");
        assertThat(back.path("status").path("bgp").path("numberEstablishedV4").asInt()).isEqualTo(1);
        HttpResponse<String> bad = admin.post(path, "application/json", request.replace("node-1-status", "bad")
                .replace("\"updatePeriodSeconds\":10", "\"updatePeriodSeconds\":90000"));
        assertThat(bad.statusCode()).isEqualTo(422);
        assertThat(bad.body()).contains("spec.updatePeriodSeconds").contains("between 0 and 86400");
        assertThat(admin.delete(path + "/node-1-status").statusCode()).isEqualTo(200);
    }

    @Test
    void badInputGetsKubeApiserverAnswers() {
        assertStatus(admin.get("/apis/projectcalico.org/v3/frobnicators"), 404, "NotFound",
                "the server could not find the requested resource");
        assertStatus(admin.post(GNP, "application/json", gnp("x", 1).replace("projectcalico.org/v3", "projectcalico.org/v1")),
                400, "BadRequest", "the API version in the data (projectcalico.org/v1) does not match the expected API "
                        + "version (projectcalico.org/v3)");
        HttpResponse<String> notJson = admin.post(GNP, "application/json", "this is not json");
        assertThat(notJson.statusCode()).isEqualTo(400);
        assertThat(json(notJson).path("reason").asText()).isEqualTo("BadRequest");
        assertStatus(admin.put(GNP + "/other", gnp("x", 1)), 400, "BadRequest",
                "the name of the object (x) does not match the name on the URL (other)");
        String huge = gnp("huge", 1).replace("\"o\":\"1\"", "\"o\":\"1\",\"pad\":\"" + "a".repeat(3_200_000) + "\"");
        assertStatus(admin.post(GNP, "application/json", huge), 413, "RequestEntityTooLarge",
                "Request entity too large: limit is 3145728");
        // kube-apiserver 1.32 passes the storage's parse error through untranslated: 500, no reason, no details.
        for (String bogus : new String[] {"bogus", "-1", "+5", "1.5"}) {
            HttpResponse<String> r = admin.get(GNP + "?watch=1&resourceVersion="
                    + java.net.URLEncoder.encode(bogus, StandardCharsets.UTF_8));
            assertStatus(r, 500, "", "resourceVersion: Invalid value: \"" + bogus + "\": strconv.ParseUint: parsing \""
                    + bogus + "\": invalid syntax");
            assertThat(json(r).has("reason")).isFalse();
            assertThat(json(r).has("details")).isFalse();
        }
        assertStatus(admin.get(GNP + "?watch=1&resourceVersion=18446744073709551616"), 500, "",
                "resourceVersion: Invalid value: \"18446744073709551616\": strconv.ParseUint: parsing "
                        + "\"18446744073709551616\": value out of range");
        assertStatus(admin.get(GNP + "?resourceVersion=abc"), 500, "",
                "resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax");
        assertStatus(admin.get(GNP + "/missing"), 404, "NotFound",
                "globalnetworkpolicies.projectcalico.org \"missing\" not found");
        assertStatus(admin.post(GNP, "application/json", gnp("x", 1).replace("\"kind\":\"GlobalNetworkPolicy\"", "\"kind\":\"Tier\"")),
                400, "BadRequest", "the kind in the data (Tier) does not match the expected kind (GlobalNetworkPolicy)");
        assertThat(json(admin.get(GNP)).path("items").toString()).doesNotContain("huge");
    }

    @Test
    void invalidResourcesAre422WithOneCausePerField() {
        HttpResponse<String> r = admin.post(GNP, "application/json", "{\"apiVersion\":\"projectcalico.org/v3\","
                + "\"kind\":\"GlobalNetworkPolicy\",\"metadata\":{\"name\":\"inv\"},\"spec\":{\"selector\":\"a ==\","
                + "\"ingress\":[{\"action\":\"Allow\",\"protocol\":\"TCP\",\"destination\":{\"ports\":[0]}}]}}");
        assertThat(r.statusCode()).isEqualTo(422);
        JsonNode s = json(r);
        assertThat(s.path("reason").asText()).isEqualTo("Invalid");
        assertThat(s.path("details").path("kind").asText()).isEqualTo("GlobalNetworkPolicy");
        assertThat(s.path("details").path("causes").findValuesAsText("field"))
                .containsExactly("spec.selector", "spec.ingress[0].destination.ports[0]");
        assertThat(admin.get(GNP + "/inv").statusCode()).isEqualTo(404);
    }

    @Test
    void createConflictsDryRunAndDelete() {
        assertThat(admin.post(GNP, "application/json", gnp("c1", 5)).statusCode()).isEqualTo(201);
        assertStatus(admin.post(GNP, "application/json", gnp("c1", 5)), 409, "AlreadyExists",
                "globalnetworkpolicies.projectcalico.org \"c1\" already exists");
        JsonNode stored = json(admin.get(GNP + "/c1"));
        String rv = stored.path("metadata").path("resourceVersion").asText();
        String update = gnp("c1", 6).replace("\"name\":\"c1\"", "\"name\":\"c1\",\"resourceVersion\":\"" + rv + "\"");
        assertThat(admin.put(GNP + "/c1", update).statusCode()).isEqualTo(200);
        assertStatus(admin.put(GNP + "/c1", update), 409, "Conflict", "Operation cannot be fulfilled on "
                + "globalnetworkpolicies.projectcalico.org \"c1\": the object has been modified; please apply your "
                + "changes to the latest version and try again");

        assertThat(admin.post(GNP + "?dryRun=All", "application/json", gnp("dry", 1)).statusCode()).isEqualTo(201);
        assertThat(admin.get(GNP + "/dry").statusCode()).isEqualTo(404);
        assertThat(admin.patch(GNP + "/c1?dryRun=All", "application/merge-patch+json", "{\"spec\":{\"order\":99}}")
                .statusCode()).isEqualTo(200);
        assertThat(json(admin.get(GNP + "/c1")).path("spec").path("order").asInt()).isEqualTo(6);
        assertThat(admin.send(admin.request(GNP + "/c1?dryRun=All").DELETE()).statusCode()).isEqualTo(200);
        assertThat(admin.get(GNP + "/c1").statusCode()).isEqualTo(200);
        assertThat(admin.delete(GNP + "/c1").statusCode()).isEqualTo(200);
        assertThat(admin.delete(GNP + "/c1").statusCode()).isEqualTo(404);
    }

    @Test
    void selectorsPagingTablesAndDeleteCollection() {
        for (int i = 0; i < 5; i++) {
            assertThat(admin.post(GNP, "application/json", gnp("page-" + i, i)).statusCode()).isEqualTo(201);
        }
        JsonNode sel = json(admin.get(GNP + "?labelSelector=o+in+(1,3)"));
        assertThat(sel.path("items").findValuesAsText("name")).containsExactly("page-1", "page-3");
        JsonNode byName = json(admin.get(GNP + "?fieldSelector=metadata.name%3Dpage-4"));
        assertThat(byName.path("items").findValuesAsText("name")).containsExactly("page-4");
        assertStatus(admin.get(GNP + "?fieldSelector=spec.order%3D1"), 400, "BadRequest",
                "field label not supported: spec.order");

        JsonNode first = json(admin.get(GNP + "?labelSelector=o&limit=2"));
        assertThat(first.path("items").size()).isEqualTo(2);
        String cont = first.path("metadata").path("continue").asText();
        assertThat(cont).isNotEmpty();
        JsonNode second = json(admin.get(GNP + "?labelSelector=o&limit=10&continue=" + cont));
        assertThat(second.path("metadata").has("continue")).isFalse();
        assertThat(first.path("items").size() + second.path("items").size()).isEqualTo(5);

        HttpResponse<String> table = admin.send(admin.request(GNP + "?labelSelector=o%3D2").header("Accept",
                "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"));
        JsonNode t = json(table);
        assertThat(t.path("kind").asText()).isEqualTo("Table");
        assertThat(t.path("columnDefinitions").findValuesAsText("name")).containsExactly("Name", "Created At");
        assertThat(t.path("rows").get(0).path("cells").get(0).asText()).isEqualTo("page-2");

        JsonNode deleted = json(admin.send(admin.request(GNP + "?labelSelector=o").DELETE()));
        assertThat(deleted.path("items").size()).isEqualTo(5);
        assertThat(json(admin.get(GNP + "?labelSelector=o")).path("items").size()).isZero();
    }

    @Test
    void watchStreamsChangesAndBookmarks() throws Exception {
        String rv = json(admin.get(GNP)).path("metadata").path("resourceVersion").asText();
        var resp = admin.stream(admin.request(GNP + "?watch=1&allowWatchBookmarks=true&resourceVersion=" + rv));
        assertThat(resp.statusCode()).isEqualTo(200);
        try (var in = new BufferedReader(new InputStreamReader(resp.body(), StandardCharsets.UTF_8))) {
            assertThat(admin.post(GNP, "application/json", gnp("watched", 1)).statusCode()).isEqualTo(201);
            JsonNode ev = JSON.readTree(Http.nextEvent(in));
            assertThat(ev.path("type").asText()).isEqualTo("ADDED");
            assertThat(ev.path("object").path("metadata").path("name").asText()).isEqualTo("watched");
            assertThat(admin.patch(GNP + "/watched", "application/json-patch+json",
                    "[{\"op\":\"replace\",\"path\":\"/spec/order\",\"value\":2}]").statusCode()).isEqualTo(200);
            ev = JSON.readTree(Http.nextEvent(in));
            assertThat(ev.path("type").asText()).isEqualTo("MODIFIED");
            assertThat(ev.path("object").path("spec").path("order").asInt()).isEqualTo(2);
            assertThat(admin.delete(GNP + "/watched").statusCode()).isEqualTo(200);
            ev = JSON.readTree(Http.nextEvent(in));
            assertThat(ev.path("type").asText()).isEqualTo("DELETED");
        }
    }

    static final String NETSETS = "/apis/projectcalico.org/v3/globalnetworksets";

    static String netset(String name, String cidr) {
        return "{\"apiVersion\":\"projectcalico.org/v3\",\"kind\":\"GlobalNetworkSet\",\"metadata\":{\"name\":\""
                + name + "\",\"labels\":{\"paging\":\"yes\"}},\"spec\":{\"nets\":[\"" + cidr + "\"]}}";
    }

    static List<String> names(JsonNode list) {
        List<String> out = new ArrayList<>();
        list.path("items").forEach(i -> out.add(i.path("metadata").path("name").asText()
                + "=" + i.path("spec").path("nets").get(0).asText()));
        return out;
    }

    @Test
    void continueTokensListAtTheFirstPagesRevisionOr410WhenCompacted() {
        for (String n : List.of("pg-a", "pg-b", "pg-c", "pg-d", "pg-e")) {
            assertThat(admin.post(NETSETS, "application/json", netset(n, "10.0.0.0/8")).statusCode()).isEqualTo(201);
        }
        String q = NETSETS + "?labelSelector=paging%3Dyes&limit=2";
        JsonNode first = json(admin.get(q));
        assertThat(names(first)).containsExactly("pg-a=10.0.0.0/8", "pg-b=10.0.0.0/8");
        String rv = first.path("metadata").path("resourceVersion").asText();
        // Writes between pages: a create after the cursor, a delete, an update, none of which the pages may show.
        assertThat(admin.post(NETSETS, "application/json", netset("pg-z", "10.0.0.0/8")).statusCode()).isEqualTo(201);
        assertThat(admin.delete(NETSETS + "/pg-d").statusCode()).isEqualTo(200);
        assertThat(admin.patch(NETSETS + "/pg-c", "application/merge-patch+json",
                "{\"spec\":{\"nets\":[\"192.168.0.0/16\"]}}").statusCode()).isEqualTo(200);
        JsonNode second = json(admin.get(q + "&continue=" + first.path("metadata").path("continue").asText()));
        assertThat(names(second)).containsExactly("pg-c=10.0.0.0/8", "pg-d=10.0.0.0/8");
        assertThat(second.path("metadata").path("resourceVersion").asText()).isEqualTo(rv);
        assertThat(second.path("metadata").path("remainingItemCount").asLong()).isEqualTo(1);
        String third = second.path("metadata").path("continue").asText();
        JsonNode last = json(admin.get(q + "&continue=" + third));
        assertThat(names(last)).containsExactly("pg-e=10.0.0.0/8");
        assertThat(last.path("metadata").has("continue")).isFalse();
        assertStatus(admin.get(q + "&continue=" + third + "&resourceVersion=" + rv), 400, "BadRequest",
                "specifying resource version is not allowed when using continue");

        // The first page's revision compacted away: kube's 410 and a token for the rest at the current state.
        MemoryDatastore memory = (MemoryDatastore) server.context().getBean(Datastore.class);
        memory.compact(memory.currentRevision());
        HttpResponse<String> gone = admin.get(q + "&continue=" + third);
        assertStatus(gone, 410, "Expired", "The provided continue parameter is too old to display a consistent list "
                + "result. You can start a new list without the continue parameter, or use the continue token in this "
                + "response to retrieve the remainder of the results. Continuing with the provided token results in an "
                + "inconsistent list - objects that were created, modified, or deleted between the time the first "
                + "chunk was returned and now may show up in the list.");
        String inconsistent = json(gone).path("metadata").path("continue").asText();
        assertThat(inconsistent).isNotEmpty();
        JsonNode rest = json(admin.get(NETSETS + "?labelSelector=paging%3Dyes&limit=1&continue=" + inconsistent));
        assertThat(names(rest)).containsExactly("pg-e=10.0.0.0/8");
        JsonNode restEnd = json(admin.get(NETSETS + "?labelSelector=paging%3Dyes&limit=1&continue="
                + rest.path("metadata").path("continue").asText()));
        assertThat(names(restEnd)).containsExactly("pg-z=10.0.0.0/8");
        admin.send(admin.request(NETSETS + "?labelSelector=paging%3Dyes").DELETE());
    }

    @Test
    void aWatchWhoseClientLeavesEndsWithoutAnyEvent() throws Exception {
        Http management = new Http("http://localhost:" + server.managementPort(), null);
        String gauge = "apiserver_longrunning_requests{application=\"apiserver\",resource=\"tiers\",verb=\"WATCH\"}";
        var resp = admin.stream(admin.request("/apis/projectcalico.org/v3/tiers?watch=1"));
        assertThat(resp.statusCode()).isEqualTo(200);
        awaitMetric(management, gauge, 1.0);
        resp.body().close(); // the client goes; nothing is ever written to tiers
        awaitMetric(management, gauge, 0.0);
    }

    /** Polls the Prometheus page until the sample has the value; fails after 30 s. */
    static void awaitMetric(Http management, String sample, double value) {
        String[] seen = {""};
        try {
            Await.until(sample + " " + value, java.time.Duration.ofSeconds(30), () -> {
                for (String line : management.get("/actuator/prometheus").body().split("\n")) {
                    if (line.startsWith(sample + " ")) {
                        seen[0] = line;
                        return Double.parseDouble(line.substring(sample.length() + 1).trim()) == value;
                    }
                }
                return false;
            });
        } catch (AssertionError e) {
            throw new AssertionError("expected " + sample + " " + value + ", last seen: " + seen[0], e);
        }
    }

    @Test
    void metricsCountRequestsByVerbResourceAndCode() {
        admin.get(GNP + "/nothing-here");
        HttpResponse<String> m = new Http("http://localhost:" + server.managementPort(), null).get("/actuator/prometheus");
        assertThat(m.body()).contains("apiserver_request_total{application=\"apiserver\",code=\"404\","
                + "resource=\"globalnetworkpolicies\",verb=\"get\"}")
                .contains("apiserver_request_duration_seconds_bucket");
        assertThat(new Http("http://localhost:" + server.managementPort(), null).get("/readiness").statusCode())
                .isEqualTo(200);
    }
}
