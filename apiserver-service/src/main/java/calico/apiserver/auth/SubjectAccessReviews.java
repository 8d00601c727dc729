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
    private final TtlCache<Question, Boolean> cache;

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
        Question question = new Question(user, verb, group, resource, namespace, name);
        var cached = cache.get(question);
        if (cached.isPresent()) {
            return cached.get();
        }
        JsonNode status;
        try {
            status = api.review(PATH, question.review());
        } catch (RuntimeException e) {
            LOG.warn("SubjectAccessReview for {} failed (denied): {}", user.name(), e.getMessage());
            return false;
        }
        boolean allowed = status.path("allowed").asBoolean(false) && !status.path("denied").asBoolean(false);
        cache.put(question, allowed, allowed ? allowTtl : denyTtl);
        return allowed;
    }

    /**
     * What one review asks, and the cache's key: equal questions are equal review specs (a
     * {@link User} is a record), so a cached answer costs no JSON.
     */
    private record Question(User user, String verb, String group, String resource, String namespace, String name) {

        /** {@return the SubjectAccessReview}: user, uid, groups and extra as kube's delegated authorizer sends them. */
        ObjectNode review() {
            ObjectNode sar = DelegatedApi.JSON.createObjectNode();
            sar.put("apiVersion", "authorization.k8s.io/v1").put("kind", "SubjectAccessReview");
            ObjectNode spec = sar.putObject("spec");
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
            return sar;
        }
    }

    @Override
    public void close() {
        api.close();
    }
}
