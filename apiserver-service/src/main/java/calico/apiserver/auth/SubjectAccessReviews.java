package calico.apiserver.auth;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delegated authorization, as an aggregated API server does in a cluster: each decision is a
 * {@code SubjectAccessReview} posted to the Kubernetes API named by {@code --authorization-kubeconfig}.
 * {@code system:masters} is allowed without asking (k8s.io/apiserver's always-allow group). Answers
 * are cached by the review's spec, allowed ones for {@code --authorization-webhook-cache-authorized-ttl}
 * and denied ones for {@code --authorization-webhook-cache-unauthorized-ttl} (10 s each, as k8s);
 * a failed review is a denial (fail closed) and is not cached.
 */
public final class SubjectAccessReviews implements AccessCheck, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(SubjectAccessReviews.class);
    private static final String PATH = "/apis/authorization.k8s.io/v1/subjectaccessreviews";

    private final DelegatedApi api;
    private final Duration allowTtl;
    private final Duration denyTtl;
    private final TtlCache<String, Boolean> cache;

    SubjectAccessReviews(DelegatedApi api, Duration allowTtl, Duration denyTtl, Clock clock) {
        this.api = api;
        this.allowTtl = allowTtl;
        this.denyTtl = denyTtl;
        this.cache = new TtlCache<>(clock);
    }

    /** Reviews against the cluster of {@code kubeconfig}. */
    public static SubjectAccessReviews open(Path kubeconfig, Duration allowTtl, Duration denyTtl, MeterRegistry metrics) {
        return new SubjectAccessReviews(new DelegatedApi(kubeconfig, "--authorization-kubeconfig", metrics,
                "apiserver_delegated_authz"), allowTtl, denyTtl, Clock.systemUTC());
    }

    @Override
    public boolean allows(User user, String verb, String group, String resource, String namespace, String name) {
        if (user.isMaster()) {
            return true;
        }
        ObjectNode spec = DelegatedApi.JSON.createObjectNode();
        spec.put("user", user.name());
        if (!user.uid().isEmpty()) {
            spec.put("uid", user.uid());
        }
        user.groups().forEach(spec.putArray("groups")::add);
        if (!user.extra().isEmpty()) {
            ObjectNode extra = spec.putObject("extra");
            user.extra().entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(e -> {
                ArrayNode values = extra.putArray(e.getKey());
                e.getValue().forEach(values::add);
            });
        }
        ObjectNode attrs = spec.putObject("resourceAttributes");
        attrs.put("verb", verb).put("group", group).put("resource", resource);
        if (namespace != null) {
            attrs.put("namespace", namespace);
        }
        if (name != null) {
            attrs.put("name", name);
        }
        String key = spec.toString();
        var cached = cache.get(key);
        if (cached.isPresent()) {
            return cached.get();
        }
        ObjectNode sar = DelegatedApi.JSON.createObjectNode();
        sar.put("apiVersion", "authorization.k8s.io/v1").put("kind", "SubjectAccessReview");
        sar.set("spec", spec);
        JsonNode status;
        try {
            status = api.review(PATH, sar);
        } catch (RuntimeException e) {
            LOG.warn("SubjectAccessReview for {} failed (denied): {}", user.name(), e.getMessage());
            return false;
        }
        boolean allowed = status.path("allowed").asBoolean(false) && !status.path("denied").asBoolean(false);
        cache.put(key, allowed, allowed ? allowTtl : denyTtl);
        return allowed;
    }

    @Override
    public void close() {
        api.close();
    }
}
