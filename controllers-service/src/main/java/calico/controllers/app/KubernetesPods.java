package calico.controllers.app;

import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import calico.controllers.ipam.PodView;
import calico.controllers.ipam.Pods;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodIP;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The Pods: for a run, an informer's cache while the node controller runs (Calico's controller keeps one
 * too; a run no longer lists every pod, see {@link InformedList}), holding only what {@link #view} reads
 * ({@link LeanStore}); a GET for the final look before a
 * release, so a cache that lags never frees a live pod's address.
 */
final class KubernetesPods implements Pods {

    static final String POD_IP = "cni.projectcalico.org/podIP";
    static final String POD_IPS = "cni.projectcalico.org/podIPs";

    private final KubernetesClient client;
    private final InformedList<Pod> pods;

    KubernetesPods(KubernetesClient client) {
        this.client = client;
        this.pods = new InformedList<>(() -> client.pods().inAnyNamespace().list().getItems(),
                h -> client.pods().inAnyNamespace().runnableInformer(0).itemStore(LeanStore.pods(client.getKubernetesSerialization()))
                        .addEventHandler(h).run());
    }

    /** Starts the cache (the node controller starts); pod changes trigger nothing (GC runs on its period). */
    void startCache() {
        pods.start(() -> { });
    }

    /** Stops the cache (the node controller stops): this replica no longer holds every pod. */
    void stopCache() {
        pods.close();
    }

    @Override
    public Map<String, PodView> all() {
        Map<String, PodView> out = new HashMap<>();
        for (Pod p : pods.items()) {
            PodView v = view(p);
            out.put(Pods.key(v.namespace(), v.name()), v);
        }
        return out;
    }

    @Override
    public Optional<PodView> get(String namespace, String name) {
        return Optional.ofNullable(client.pods().inNamespace(namespace).withName(name).get()).map(KubernetesPods::view);
    }

    static PodView view(Pod p) {
        Set<IpAddress> ips = new HashSet<>();
        if (p.getStatus() != null) {
            if (p.getStatus().getPodIPs() != null) {
                for (PodIP ip : p.getStatus().getPodIPs()) {
                    address(ip.getIp(), ips);
                }
            }
            address(p.getStatus().getPodIP(), ips);
        }
        Map<String, String> annotations = p.getMetadata().getAnnotations() == null ? Map.of()
                : p.getMetadata().getAnnotations();
        address(annotations.get(POD_IP), ips);
        String list = annotations.get(POD_IPS);
        if (list != null) {
            for (String s : list.split(",")) {
                address(s, ips);
            }
        }
        String phase = p.getStatus() == null ? null : p.getStatus().getPhase();
        return new PodView(p.getMetadata().getNamespace(), p.getMetadata().getName(),
                p.getSpec() == null ? null : p.getSpec().getNodeName(), ips,
                "Succeeded".equals(phase) || "Failed".equals(phase));
    }

    private static void address(String text, Set<IpAddress> into) {
        if (text != null && !text.isBlank()) {
            Cidr.tryParseCidrOrIp(text.trim()).ifPresent(c -> into.add(c.address()));
        }
    }
}
