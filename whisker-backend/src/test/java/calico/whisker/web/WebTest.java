package calico.whisker.web;

import static org.assertj.core.api.Assertions.assertThat;

import calico.whisker.testing.RealGoldmane;
import calico.whisker.testing.Whisker;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Static UI serving, security headers on every kind of response, and JSON bodies for 404/405/406. */
class WebTest {

    static final JsonMapper JSON = JsonMapper.builder().build();
    static final Map<String, String> HEADERS = Map.of(
            "Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
                    + "object-src 'none'; frame-ancestors 'none'; base-uri 'none'",
            "X-Content-Type-Options", "nosniff",
            "X-Frame-Options", "DENY",
            "Referrer-Policy", "no-referrer",
            "Permissions-Policy", "camera=(), microphone=(), geolocation=()",
            "Cross-Origin-Opener-Policy", "same-origin");

    @TempDir
    static Path dir;
    static RealGoldmane gm;
    static Whisker whisker;

    @BeforeAll
    static void start() throws Exception {
        gm = RealGoldmane.plaintext();
        whisker = Whisker.start(dir, gm.address());
    }

    @AfterAll
    static void stop() {
        whisker.close();
        gm.close();
    }

    static void securityHeaders(HttpResponse<?> r) {
        HEADERS.forEach((k, v) -> assertThat(r.headers().firstValue(k)).as(k + " on " + r.uri()).hasValue(v));
        assertThat(r.headers().firstValue("Strict-Transport-Security")).as("plain HTTP").isEmpty();
    }

    static JsonNode jsonError(HttpResponse<String> r, int status) {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(v -> assertThat(v).startsWith(
                "application/json"));
        JsonNode b = JSON.readTree(r.body());
        assertThat(b.get("status").asInt()).isEqualTo(status);
        assertThat(b.get("message").asString()).isNotBlank();
        assertThat(b.has("parameter")).isFalse();
        return b;
    }

    @Test
    void theUiIsServedPubliclyWithSecurityHeaders() throws Exception {
        for (String path : new String[] {"/", "/index.html"}) {
            HttpResponse<String> r = whisker.get(path, null);
            assertThat(r.statusCode()).isEqualTo(200);
            // whisker-ui's built page (a runtime dependency): the app's root and its hashed bundle.
            assertThat(r.body()).contains("<div id=\"root\">").contains("./assets/index-");
            assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(v -> assertThat(v).startsWith(
                    "text/html"));
            securityHeaders(r);
            assertThat(r.headers().firstValue("Cache-Control")).isEmpty();
        }
    }

    @Test
    void apiResponsesCarryHeadersAndNoStore() throws Exception {
        HttpResponse<String> r = whisker.get("/flows");
        assertThat(r.statusCode()).isEqualTo(200);
        securityHeaders(r);
        assertThat(r.headers().firstValue("Cache-Control")).hasValue("no-store");
        HttpResponse<String> bad = whisker.get("/flows?page=x");
        assertThat(bad.statusCode()).isEqualTo(400);
        securityHeaders(bad);
        securityHeaders(whisker.get("/flows", null));
    }

    @Test
    void unknownPathsAndMissingStaticFilesAre404Json() throws Exception {
        HttpResponse<String> missingAsset = whisker.get("/assets/missing.js", null);
        assertThat(jsonError(missingAsset, 404).get("error").asString()).isEqualTo("Not Found");
        securityHeaders(missingAsset);
        HttpResponse<String> unknown = whisker.get("/no/such/api");
        jsonError(unknown, 404);
        securityHeaders(unknown);
        jsonError(whisker.get("/graph"), 404);
    }

    @Test
    void wrongMethodIs405JsonAndUnacceptableIs406Json() throws Exception {
        HttpResponse<String> post = whisker.http.send(whisker.request("/flows")
                .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(jsonError(post, 405).get("message").asString()).contains("POST");
        assertThat(post.headers().firstValue("Allow")).hasValueSatisfying(v -> assertThat(v).contains("GET"));
        securityHeaders(post);
        HttpResponse<String> xml = whisker.http.send(whisker.request("/flows").header("Accept", "application/xml")
                .build(), HttpResponse.BodyHandlers.ofString());
        jsonError(xml, 406);
    }

    @Test
    void containerErrorsAreJsonToo() throws Exception {
        // Tomcat rejects an illegal request line before Spring (or any filter) sees it.
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", whisker.port)) {
            s.getOutputStream().write("GET /fl{ows HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                    .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            String r = new String(s.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            assertThat(r).startsWith("HTTP/1.1 400").contains("Content-Type: application/json")
                    .contains("X-Content-Type-Options: nosniff").contains("\"status\":400");
        }
    }
}
