package calico.whisker.auth;

import calico.whisker.web.Json;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.jwk.source.JWKSource;
import com.nimbusds.jose.jwk.source.JWKSourceBuilder;
import com.nimbusds.jose.proc.JWSVerificationKeySelector;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.proc.DefaultJWTClaimsVerifier;
import com.nimbusds.jwt.proc.DefaultJWTProcessor;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;

/**
 * JWT bearer tokens signed by the issuer's keys (JWS, asymmetric algorithms only), with {@code iss}
 * (when an issuer is configured), {@code aud} (when an audience is) and {@code exp} checked.
 * The JWK set comes from WHISKER_OIDC_JWK_SET_URI or the issuer's discovery document, fetched
 * on first use and retried until it succeeds, so an identity provider that is briefly down
 * does not stop the backend from starting.
 */
public final class OidcAuthenticator implements Authenticator {

    private static final Logger log = LoggerFactory.getLogger(OidcAuthenticator.class);
    private static final Set<JWSAlgorithm> ALGORITHMS = Set.of(JWSAlgorithm.RS256, JWSAlgorithm.RS384,
            JWSAlgorithm.RS512, JWSAlgorithm.PS256, JWSAlgorithm.PS384, JWSAlgorithm.PS512, JWSAlgorithm.ES256,
            JWSAlgorithm.ES384, JWSAlgorithm.ES512, JWSAlgorithm.EdDSA);

    private final String issuer;
    private final String jwkSetUri;
    private final String audience;
    private volatile DefaultJWTProcessor<SecurityContext> processor;

    OidcAuthenticator(String issuer, String jwkSetUri, String audience) {
        this.issuer = issuer;
        this.jwkSetUri = jwkSetUri;
        this.audience = audience;
    }

    @Override
    public String reject(String authorization) {
        String token = Secrets.credential(authorization, "Bearer");
        if (token == null) {
            return "authentication required: send Authorization: Bearer <JWT>";
        }
        DefaultJWTProcessor<SecurityContext> p;
        try {
            p = processor();
        } catch (RuntimeException e) {
            log.warn("OIDC: cannot load the issuer's keys: {}", e.getMessage());
            return "the identity provider's keys cannot be loaded";
        }
        try {
            p.process(token, null);
            return null;
        } catch (Exception e) {
            log.debug("OIDC: token rejected: {}", e.getMessage());
            return "the bearer token is not valid: " + e.getMessage();
        }
    }

    private DefaultJWTProcessor<SecurityContext> processor() {
        DefaultJWTProcessor<SecurityContext> p = processor;
        if (p != null) {
            return p;
        }
        synchronized (this) {
            if (processor == null) {
                processor = build();
            }
            return processor;
        }
    }

    private DefaultJWTProcessor<SecurityContext> build() {
        String jwks = jwkSetUri != null ? jwkSetUri : discover();
        JWKSource<SecurityContext> source;
        try {
            source = JWKSourceBuilder.create(new URL(jwks)).retrying(true).build();
        } catch (java.net.MalformedURLException e) {
            throw new IllegalStateException("bad JWK set URL " + jwks, e);
        }
        var p = new DefaultJWTProcessor<SecurityContext>();
        p.setJWSKeySelector(new JWSVerificationKeySelector<>(ALGORITHMS, source));
        JWTClaimsSet exact = issuer == null ? new JWTClaimsSet.Builder().build()
                : new JWTClaimsSet.Builder().issuer(issuer).build();
        p.setJWTClaimsSetVerifier(new DefaultJWTClaimsVerifier<>(audience, exact, Set.of("exp")));
        return p;
    }

    /** The discovery document's {@code jwks_uri}; its {@code issuer} must be the configured one. */
    private String discover() {
        String base = issuer.endsWith("/") ? issuer.substring(0, issuer.length() - 1) : issuer;
        try {
            HttpResponse<String> r = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()
                    .send(HttpRequest.newBuilder(URI.create(base + "/.well-known/openid-configuration"))
                            .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new IllegalStateException("discovery answered " + r.statusCode());
            }
            JsonNode doc = Json.MAPPER.readTree(r.body());
            JsonNode iss = doc.get("issuer");
            JsonNode jwks = doc.get("jwks_uri");
            if (iss == null || !issuer.equals(iss.asString()) || jwks == null || !jwks.isString()) {
                throw new IllegalStateException("discovery document of " + issuer
                        + " lacks jwks_uri or names another issuer");
            }
            return jwks.asString();
        } catch (java.io.IOException e) {
            throw new IllegalStateException("discovery of " + issuer + " failed: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
