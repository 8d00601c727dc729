package calico.felix.e2e;

import calico.api.k8s.KubeNamespace;
import calico.api.k8s.KubeNetworkPolicy;
import calico.api.k8s.KubePod;
import calico.api.k8s.KubeServiceAccount;
import calico.api.k8s.PodConverter;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.ContainerPortBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.Resource;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The cluster's Kubernetes objects as real objects in a kube-apiserver: a Node for
 * {@link Cluster#NODE} (as its kubelet would register it), Namespaces, ServiceAccounts, Pods
 * scheduled to that node, and {@code networking.k8s.io/v1} NetworkPolicies. A pod is created as
 * Calico's CNI plugin leaves it on KDD: its address in the {@code cni.projectcalico.org/podIP} and
 * {@code podIPs} annotations (no kubelet here writes {@code status.podIP}). Relabelling changes
 * the labels only; the API server keeps adding {@code kubernetes.io/metadata.name} to namespaces.
 */
final class ApiServerObjects implements ClusterObjects {

    private static final String FIELD_MANAGER = "calico-e2e";

    private final KubernetesClient client;

    ApiServerObjects(KubernetesClient client) {
        this.client = client;
        node(Cluster.NODE);
    }

    @Override
    public void node(String name) {
        if (client.nodes().withName(name).get() == null) {
            client.nodes().resource(new NodeBuilder().withNewMetadata().withName(name)
                    .withLabels(Map.of("kubernetes.io/hostname", name)).endMetadata().build()).create();
        }
    }

    @Override
    public void deleteNode(String name) {
        client.nodes().withName(name).delete();
    }

    @Override
    public void namespace(KubeNamespace namespace) {
        String name = namespace.metadata().name();
        Map<String, String> labels = namespace.metadata().labels();
        createOrRelabel(client.namespaces().withName(name), () -> client.namespaces().resource(new NamespaceBuilder()
                .withNewMetadata().withName(name).withLabels(labels).endMetadata().build()), labels);
    }

    @Override
    public void serviceAccount(KubeServiceAccount serviceAccount) {
        String ns = serviceAccount.metadata().namespace();
        String name = serviceAccount.metadata().name();
        Map<String, String> labels = serviceAccount.metadata().labels();
        var sas = client.serviceAccounts().inNamespace(ns);
        createOrRelabel(sas.withName(name), () -> sas.resource(new ServiceAccountBuilder().withNewMetadata()
                .withName(name).withNamespace(ns).withLabels(labels).endMetadata().build()), labels);
    }

    @Override
    public void pod(KubePod pod) {
        String ns = pod.metadata().namespace();
        var pods = client.pods().inNamespace(ns);
        createOrRelabel(pods.withName(pod.metadata().name()), () -> pods.resource(leftByCni(pod)), pod.metadata().labels());
    }

    @Override
    public void deletePod(KubePod pod) {
        client.pods().inNamespace(pod.metadata().namespace()).withName(pod.metadata().name()).withGracePeriod(0).delete();
    }

    /**
     * {@return the Pod as the CNI plugin leaves it on KDD}: its spec, and its address in Calico's
     * annotations (also {@link BenchStore}'s pods); a dual-stack pod ({@code status.podIPs}) has all
     * its addresses in {@code podIPs}, the first in {@code podIP}.
     */
    static Pod leftByCni(KubePod pod) {
        String ip = pod.status().podIP() + "/32";
        String ips = pod.status().podIPs().isEmpty() ? ip : String.join(",", pod.status().podIPs().stream()
                .map(p -> p.ip() + (p.ip().contains(":") ? "/128" : "/32")).toList());
        List<io.fabric8.kubernetes.api.model.Container> containers = pod.spec().containers().stream()
                .map(c -> new ContainerBuilder().withName(c.name()).withImage("registry.invalid/e2e:1")
                        .withPorts(c.ports().stream().map(p -> new ContainerPortBuilder().withName(p.name())
                                .withContainerPort(p.containerPort()).withProtocol(p.protocol()).build()).toList())
                        .build())
                .toList();
        return new PodBuilder()
                .withNewMetadata().withName(pod.metadata().name()).withNamespace(pod.metadata().namespace())
                .withLabels(pod.metadata().labels())
                .withAnnotations(Map.of(PodConverter.ANNOTATION_POD_IP, ip, PodConverter.ANNOTATION_POD_IPS, ips))
                .endMetadata()
                .withNewSpec().withNodeName(pod.spec().nodeName()).withServiceAccountName(pod.spec().serviceAccountName())
                .withContainers(containers).endSpec()
                .build();
    }

    /** Creates the object {@code fresh} makes where {@code named} names nothing, else sets the existing one's labels. */
    private static <T extends HasMetadata> void createOrRelabel(Resource<T> named, Supplier<Resource<T>> fresh,
            Map<String, String> labels) {
        if (named.get() == null) {
            fresh.get().create();
        } else {
            named.edit(o -> {
                o.getMetadata().setLabels(new HashMap<>(labels));
                return o;
            });
        }
    }

    @Override
    public void networkPolicy(String manifest, KubeNetworkPolicy parsed) {
        client.resource(manifest).inNamespace(parsed.metadata().namespace()).fieldManager(FIELD_MANAGER).forceConflicts()
                .serverSideApply();
    }

    @Override
    public void adminPolicy(String manifest) {
        client.resource(manifest).fieldManager(FIELD_MANAGER).forceConflicts().serverSideApply();
    }

    @Override
    public void deleteAdminPolicy(String kind, String name) {
        client.genericKubernetesResources("policy.networking.k8s.io/v1alpha1", kind).withName(name).delete();
    }

    @Override
    public void deleteNetworkPolicy(String namespace, String name) {
        client.network().v1().networkPolicies().inNamespace(namespace).withName(name).delete();
    }

    @Override
    public void close() {
        // the client is the extension's
    }
}
