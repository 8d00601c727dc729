package calico.cni.plugin;

import calico.api.model.Protocol;
import calico.api.model.WorkloadEndpointSpec;
import calico.cni.spec.CniError;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What Calico's plugin reads from the Kubernetes API for a pod ({@code policy.type: k8s} with
 * {@code kubernetes.kubeconfig}): its labels, service account and named container ports, and its
 * namespace's labels (for IP pools' {@code namespaceSelector}).
 */
public final class PodLookup {

    /**
     * The pod facts that go into its WorkloadEndpoint.
     *
     * @param generateName the pod's {@code metadata.generateName} (a Deployment's pods share it; flow
     *                     logs aggregate under it), or null
     * @param namespaceLabels the labels of the pod's Namespace (empty when it has none), or null when
     *                     the Namespace could not be read (then only pools without a namespace selector
     *                     qualify)
     */
    public record PodInfo(Map<String, String> labels, String serviceAccount, List<WorkloadEndpointSpec.EndpointPort> ports,
                          String generateName, Map<String, String> namespaceLabels) {
        public PodInfo {
            labels = labels == null ? Map.of() : Map.copyOf(labels);
            namespaceLabels = namespaceLabels == null ? null : Map.copyOf(namespaceLabels);
            ports = List.copyOf(ports);
            generateName = generateName == null || generateName.isEmpty() ? null : generateName;
        }
    }

    private PodLookup() {
    }

    public static PodInfo get(String kubeconfig, String namespace, String name) {
        String contents;
        try {
            contents = Files.readString(Path.of(kubeconfig));
        } catch (IOException e) {
            throw new CniError(CniError.INVALID_CONFIG, "kubernetes.kubeconfig: " + kubeconfig + " cannot be read: " + e.getMessage());
        }
        Config config = Datastores.withShortRetries(Config.fromKubeconfig(contents));
        config.setRequestTimeout(10_000);
        config.setConnectionTimeout(5_000);
        try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config).build()) {
            Pod pod = client.pods().inNamespace(namespace).withName(name).get();
            if (pod == null) {
                throw new CniError(CniError.UNKNOWN_CONTAINER, "K8S_POD_NAME: pod " + namespace + "/" + name + " does not exist");
            }
            List<WorkloadEndpointSpec.EndpointPort> ports = new ArrayList<>();
            if (pod.getSpec() != null) {
                for (Container c : pod.getSpec().getContainers()) {
                    for (ContainerPort p : c.getPorts()) {
                        if (p.getName() != null && !p.getName().isEmpty()) {
                            ports.add(new WorkloadEndpointSpec.EndpointPort(p.getName(),
                                    protocol(p.getProtocol()), p.getContainerPort(), null, null));
                        }
                    }
                }
            }
            String sa = pod.getSpec() == null ? null : pod.getSpec().getServiceAccountName();
            return new PodInfo(pod.getMetadata().getLabels(), sa == null || sa.isEmpty() ? "default" : sa, ports,
                    pod.getMetadata().getGenerateName(), namespaceLabels(client, namespace));
        } catch (KubernetesClientException e) {
            throw new CniError(CniError.TRY_AGAIN_LATER, "kubernetes: cannot read pod " + namespace + "/" + name + ": " + e.getMessage());
        }
    }

    /**
     * {@return the Namespace's labels}, or null when it cannot be read (absent, or no permission):
     * a pod whose namespace is unknown still gets an address, only never from a pool that selects
     * namespaces.
     */
    private static Map<String, String> namespaceLabels(KubernetesClient client, String namespace) {
        try {
            Namespace ns = client.namespaces().withName(namespace).get();
            if (ns == null || ns.getMetadata() == null) {
                return null;
            }
            return ns.getMetadata().getLabels() == null ? Map.of() : ns.getMetadata().getLabels();
        } catch (KubernetesClientException e) {
            return null;
        }
    }

    private static Protocol protocol(String p) {
        return p == null || p.isEmpty() ? Protocol.TCP : Protocol.parse(p.toUpperCase());
    }
}
