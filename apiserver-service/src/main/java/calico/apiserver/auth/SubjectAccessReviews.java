package calico.apiserver.auth;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Delegated authorization, as an aggregated API server does in a cluster: each decision is a
 * {@code SubjectAccessReview} posted to the Kubernetes API named by {@code --authorization-kubeconfig}.
 * A failed review is a denial (fail closed).
 */
public final class SubjectAccessReviews implements AccessCheck, AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final KubernetesClient client;

    public SubjectAccessReviews(Path kubeconfig) {
        try {
            Config config = Config.fromKubeconfig(Files.readString(kubeconfig));
            this.client = new KubernetesClientBuilder().withConfig(config).build();
        } catch (IOException e) {
            throw new UncheckedIOException("--authorization-kubeconfig " + kubeconfig + ": " + e.getMessage(), e);
        }
    }

    @Override
    public boolean allows(User user, String verb, String group, String resource, String namespace, String name) {
        if (user.isMaster()) {
            return true;
        }
        ObjectNode sar = JSON.createObjectNode();
        sar.put("apiVersion", "authorization.k8s.io/v1").put("kind", "SubjectAccessReview");
        ObjectNode spec = sar.putObject("spec");
        spec.put("user", user.name());
        if (!user.uid().isEmpty()) {
            spec.put("uid", user.uid());
        }
        user.groups().forEach(spec.putArray("groups")::add);
        ObjectNode attrs = spec.putObject("resourceAttributes");
        attrs.put("verb", verb).put("group", group).put("resource", resource);
        if (namespace != null) {
            attrs.put("namespace", namespace);
        }
        if (name != null) {
            attrs.put("name", name);
        }
        try {
            String answer = client.raw(client.getMasterUrl().toString().replaceAll("/$", "")
                    + "/apis/authorization.k8s.io/v1/subjectaccessreviews", "POST", sar);
            JsonNode status = JSON.readTree(answer == null ? "{}" : answer).path("status");
            return status.path("allowed").asBoolean(false) && !status.path("denied").asBoolean(false);
        } catch (Exception e) {
            return false;
        }
    }

    @Override
    public void close() {
        client.close();
    }
}
