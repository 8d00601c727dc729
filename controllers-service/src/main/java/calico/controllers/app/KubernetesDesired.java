package calico.controllers.app;

import calico.api.k8s.KubeNamespace;
import calico.api.k8s.KubeNetworkPolicy;
import calico.api.k8s.KubePod;
import calico.api.k8s.KubeServiceAccount;
import calico.api.k8s.KubernetesConverter;
import calico.api.k8s.KubernetesObjects;
import calico.api.model.Resource;
import calico.api.model.WorkloadEndpoint;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Calico resources the Kubernetes objects stand for, converted by calico-api's converter (the one the
 * kubernetes datastore presents them with), read through fabric8 so that no Calico CRD is needed (an
 * etcd-mode cluster has none).
 */
final class KubernetesDesired {

    private static final Logger LOG = LoggerFactory.getLogger(KubernetesDesired.class);

    private static final ObjectMapper JSON = new ObjectMapper();

    private final KubernetesClient client;
    private final KubernetesConverter converter = new KubernetesConverter();
    private final KubernetesObjects objects = new KubernetesObjects();

    KubernetesDesired(KubernetesClient client) {
        this.client = client;
    }

    List<Resource> networkPolicies(List<NetworkPolicy> items) {
        List<Resource> out = new ArrayList<>();
        for (var np : items) {
            var c = converter.networkPolicy(parse(np, "networking.k8s.io/v1", "NetworkPolicy", KubeNetworkPolicy.class));
            if (!c.isComplete()) {
                LOG.warn("NetworkPolicy {}/{}: rules Calico cannot express were dropped: {}", np.getMetadata().getNamespace(),
                        np.getMetadata().getName(), c.droppedRules());
            }
            out.add(c.value());
        }
        return out;
    }

    List<Resource> namespaceProfiles(List<Namespace> items) {
        return items.stream()
                .<Resource>map(ns -> converter.namespaceProfile(parse(ns, "v1", "Namespace", KubeNamespace.class))).toList();
    }

    List<Resource> serviceAccountProfiles(List<ServiceAccount> items) {
        return items.stream()
                .<Resource>map(sa -> converter.serviceAccountProfile(parse(sa, "v1", "ServiceAccount", KubeServiceAccount.class)))
                .toList();
    }

    List<WorkloadEndpoint> workloadEndpoints(List<Pod> items) {
        List<WorkloadEndpoint> out = new ArrayList<>();
        for (var pod : items) {
            converter.workloadEndpoint(parse(pod, "v1", "Pod", KubePod.class)).ifPresent(out::add);
        }
        return out;
    }

    /** Items of a list may come without apiVersion and kind, which the parser checks: they are set first. */
    private <T> T parse(HasMetadata object, String apiVersion, String kind, Class<T> type) {
        try {
            ObjectNode tree = (ObjectNode) JSON.readTree(client.getKubernetesSerialization().asJson(object));
            tree.put("apiVersion", apiVersion);
            tree.put("kind", kind);
            return objects.parse(JSON.writeValueAsString(tree), type);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(kind + " " + object.getMetadata().getName() + ": " + e.getMessage(), e);
        }
    }
}
