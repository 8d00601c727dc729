package calico.whisker.auth;

import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.getRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.assertj.core.api.Assertions.assertThat;

import calico.whisker.testing.RealGoldmane;
import calico.whisker.testing.Whisker;
import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.core.WireMockConfiguration;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Each WHISKER_AUTH_MODE against the real application: who gets a 200, who a 401 with a challenge. */
class AuthTest {

    static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    static Path dir;
    static RealGoldmane gm;

    @BeforeAll
    static void start() {
        gm = RealGoldmane.plaintext();
    }

    @AfterAll
    static void stop() {
        gm.close();
    }

    static void assert401(HttpResponse<String> r, String challenge) {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(401);
        assertThat(r.headers().firstValue("WWW-Authenticate")).hasValue(challenge);
        assertThat(r.headers().firstValue("Content-Type")).hasValue("application/json");
        assertThat(r.headers().firstValue("Content-Security-Policy")).isPresent();
        assertThat(r.headers().firstValue("Cache-Control")).hasValue("no-store");
        JsonNode body = JSON.readTree(r.body());
        assertThat(body.get("status").asInt()).isEqualTo(401);
        assertThat(body.get("error").asString()).isEqualTo("Unauthorized");
        assertThat(body.get("message").asString()).isNotBlank().doesNotContain(Whisker.TOKEN);
    }

    @Test
    void tokenModeIsTheDefaultAndComparesTheBearerToken() throws Exception {
        Path token = dir.resolve("default-token");
        Files.writeString(token, "tok-" + "x".repeat(30) + "\n");
        // No --whisker.auth-mode: the default (token) must apply.
        try (Whisker w = Whisker.wrap(Whisker.run("--server.port=0", "--server.address=127.0.0.1",
                "--calico.health.port=0", "--calico.health.host=127.0.0.1",
                "--whisker.goldmane-host=" + gm.address(), "--whisker.auth-token-file=" + token), null)) {
            assert401(w.get("/flows", null), "Bearer realm=\"whisker\"");
            assert401(w.get("/flows", "Bearer wrong"), "Bearer realm=\"whisker\"");
            assert401(w.get("/flows", "Bearer tok-" + "x".repeat(29)), "Bearer realm=\"whisker\"");
            assert401(w.get("/flows", "Basic " + b64("a:tok-" + "x".repeat(30))), "Bearer realm=\"whisker\"");
            assert401(w.get("/flows-filter-hints?type=DestName", null), "Bearer realm=\"whisker\"");
            assert401(w.get("/policies/statistics", null), "Bearer realm=\"whisker\"");
            assert401(w.get("/flows?watch=true", null), "Bearer realm=\"whisker\"");
            // Authentication comes before parameter checks (and so before any goldmane call).
            assert401(w.get("/flows?page=-1", null), "Bearer realm=\"whisker\"");
            assertThat(w.get("/flows", "Bearer tok-" + "x".repeat(30)).statusCode()).isEqualTo(200);
            assertThat(w.get("/flows", "bearer tok-" + "x".repeat(30)).statusCode()).isEqualTo(200);
            // The page itself is public so that it can ask for the token.
            assertThat(w.get("/", null).statusCode()).isEqualTo(200);
            assertThat(w.get("/index.html", null).statusCode()).isEqualTo(200);
        }
    }

    @Test
    void basicModeChecksUserAndPassword() throws Exception {
        Path users = dir.resolve("users");
        Files.writeString(users, "# operators\nalice:wonder land\n\nbob:builder\n");
        try (Whisker w = Whisker.start(dir, gm.address(), "--whisker.auth-mode=basic",
                "--whisker.auth-basic-file=" + users)) {
            String challenge = "Basic realm=\"whisker\"";
            assertThat(w.get("/flows", "Basic " + b64("alice:wonder land")).statusCode()).isEqualTo(200);
            assertThat(w.get("/flows", "Basic " + b64("bob:builder")).statusCode()).isEqualTo(200);
            assert401(w.get("/flows", null), challenge);
            assert401(w.get("/flows", "Basic " + b64("alice:builder")), challenge);
            assert401(w.get("/flows", "Basic " + b64("carol:builder")), challenge);
            assert401(w.get("/flows", "Basic not-base64!"), challenge);
            assert401(w.get("/flows", "Bearer " + Whisker.TOKEN), challenge);
        }
    }

    @Test
    void noneModeLetsEveryoneIn() throws Exception {
        try (Whisker w = Whisker.start(dir, gm.address(), "--whisker.auth-mode=none")) {
            assertThat(w.get("/flows", null).statusCode()).isEqualTo(200);
            assertThat(w.get("/flows", "Bearer anything").statusCode()).isEqualTo(200);
        }
    }

    @Test
    void oidcModeValidatesJwtsAgainstTheIssuersJwkSet() throws Exception {
        RSAKey key = new RSAKeyGenerator(2048).keyID("k1").generate();
        RSAKey other = new RSAKeyGenerator(2048).keyID("k1").generate();
        WireMockServer idp = new WireMockServer(WireMockConfiguration.options().dynamicPort().bindAddress("127.0.0.1"));
        idp.start();
        try {
            String issuer = "http://127.0.0.1:" + idp.port() + "/realms/calico";
            idp.stubFor(get(urlEqualTo("/realms/calico/.well-known/openid-configuration")).willReturn(okJson(
                    "{\"issuer\":\"" + issuer + "\",\"jwks_uri\":\"" + issuer + "/certs\"}")));
            idp.stubFor(get(urlEqualTo("/realms/calico/certs")).willReturn(okJson(
                    new JWKSet(key.toPublicJWK()).toString())));
            try (Whisker w = Whisker.start(dir, gm.address(), "--whisker.auth-mode=oidc",
                    "--whisker.oidc-issuer-uri=" + issuer, "--whisker.oidc-audience=whisker")) {
                Instant now = Instant.now();
                String good = jwt(key, issuer, "whisker", now.plusSeconds(300));
                assertThat(w.get("/flows", "Bearer " + good).statusCode()).isEqualTo(200);
                String challenge = "Bearer realm=\"whisker\"";
                assert401(w.get("/flows", null), challenge);
                assert401(w.get("/flows", "Bearer " + jwt(other, issuer, "whisker", now.plusSeconds(300))), challenge);
                assert401(w.get("/flows", "Bearer " + jwt(key, issuer, "whisker", now.minusSeconds(600))), challenge);
                assert401(w.get("/flows", "Bearer " + jwt(key, "http://evil.example/", "whisker",
                        now.plusSeconds(300))), challenge);
                assert401(w.get("/flows", "Bearer " + jwt(key, issuer, "someone-else", now.plusSeconds(300))),
                        challenge);
                assert401(w.get("/flows", "Bearer not.a.jwt"), challenge);
                String[] parts = good.split("\\.");
                assert401(w.get("/flows", "Bearer " + parts[0] + "." + parts[1] + "."), challenge);
                idp.verify(getRequestedFor(urlEqualTo("/realms/calico/.well-known/openid-configuration")));
            }
            // A JWK set URI alone (no discovery, no issuer check).
            try (Whisker w = Whisker.start(dir, gm.address(), "--whisker.auth-mode=oidc",
                    "--whisker.oidc-jwk-set-uri=" + issuer + "/certs")) {
                assertThat(w.get("/flows", "Bearer " + jwt(key, "anyone", "any", Instant.now().plusSeconds(60)))
                        .statusCode()).isEqualTo(200);
                assert401(w.get("/flows", "Bearer " + jwt(other, "anyone", "any", Instant.now().plusSeconds(60))),
                        "Bearer realm=\"whisker\"");
            }
        } finally {
            idp.stop();
        }
    }

    static String jwt(RSAKey key, String issuer, String audience, Instant expires) throws Exception {
        SignedJWT j = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.RS256).keyID(key.getKeyID()).build(),
                new JWTClaimsSet.Builder().issuer(issuer).audience(audience).subject("user-1")
                        .issueTime(Date.from(Instant.now().minusSeconds(1000))).expirationTime(Date.from(expires))
                        .build());
        j.sign(new RSASSASigner(key));
        return j.serialize();
    }

    static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }
}
