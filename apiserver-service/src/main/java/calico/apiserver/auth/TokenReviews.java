package calico.apiserver.auth;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delegated token authentication, as an aggregated API server does it: a bearer token is a
 * {@code TokenReview} posted to the cluster ({@code --authentication-kubeconfig}). Answers are
 * cached for {@code --authentication-token-webhook-cache-ttl} (10 s), both "this user" and "not
 * a token we know"; a review that failed (no answer, or an answer carrying an error) is not
 * cached, so the next request asks again. The cache is keyed by an HMAC of the token under a key
 * made at start, never by the token itself (as k8s).
 */
public final class TokenReviews implements TokenAuthenticator, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(TokenReviews.class);
    private static final String PATH = "/apis/authentication.k8s.io/v1/tokenreviews";

    private final DelegatedApi api;
    private final Duration ttl;
    private final TtlCache<String, Optional<User>> cache;
    private final byte[] hmacKey = new byte[32];

    TokenReviews(DelegatedApi api, Duration ttl, Clock clock) {
        this.api = api;
        this.ttl = ttl;
        this.cache = new TtlCache<>(clock);
        new SecureRandom().nextBytes(hmacKey);
    }

    /** Reviews against the cluster of {@code kubeconfig}, answers kept for {@code ttl}. */
    public static TokenReviews open(Path kubeconfig, Duration ttl, MeterRegistry metrics) {
        return new TokenReviews(new DelegatedApi(kubeconfig, "--authentication-kubeconfig", metrics,
                "apiserver_delegated_authn"), ttl, Clock.systemUTC());
    }

    @Override
    public Optional<User> user(String token) {
        String key = digest(token);
        Optional<Optional<User>> cached = cache.get(key);
        if (cached.isPresent()) {
            return cached.get();
        }
        ObjectNode review = DelegatedApi.JSON.createObjectNode();
        review.put("apiVersion", "authentication.k8s.io/v1").put("kind", "TokenReview");
        review.putObject("spec").put("token", token);
        JsonNode status;
        try {
            status = api.review(PATH, review);
        } catch (RuntimeException e) {
            LOG.warn("TokenReview failed: {}", e.getMessage());
            return Optional.empty();
        }
        if (!status.path("authenticated").asBoolean(false)) {
            if (status.path("error").asText("").isEmpty()) {
                cache.put(key, Optional.empty(), ttl);
            }
            return Optional.empty();
        }
        JsonNode u = status.path("user");
        List<String> groups = new ArrayList<>();
        u.path("groups").forEach(g -> groups.add(g.asText()));
        Map<String, List<String>> extra = new LinkedHashMap<>();
        u.path("extra").fields().forEachRemaining(e -> {
            List<String> values = new ArrayList<>();
            e.getValue().forEach(v -> values.add(v.asText()));
            extra.put(e.getKey(), values);
        });
        Optional<User> user = Optional.of(new User(u.path("username").asText(), u.path("uid").asText(""), groups, extra));
        cache.put(key, user, ttl);
        return user;
    }

    private String digest(String token) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(hmacKey, "HmacSHA256"));
            return Base64.getEncoder().encodeToString(mac.doFinal(token.getBytes(StandardCharsets.UTF_8)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }

    /** The cluster's client, shared with the authentication ConfigMap's watch (same kubeconfig). */
    KubernetesClient client() {
        return api.client();
    }

    @Override
    public void close() {
        api.close();
    }
}
