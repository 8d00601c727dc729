package calico.confd.services;

import calico.confd.model.ServiceInfo;
import io.fabric8.kubernetes.api.model.LoadBalancerIngress;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceSpec;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kubernetes Services and EndpointSlices, watched with informers, turned into one
 * {@link ServiceInfo} per service for this node (whether it hosts a ready endpoint). After every
 * change the whole map is handed on; the daemon's store compares it and renders only on a
 * difference, so endpoint churn on other nodes costs a comparison, not a reload.
 */
public final class KubernetesServices implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(KubernetesServices.class);
    /** The label that ties an EndpointSlice to its Service. */
    static final String SERVICE_NAME_LABEL = "kubernetes.io/service-name";

    private final KubernetesClient client;
    private final String nodeName;
    private final Consumer<Map<String, ServiceInfo>> sink;
    private final Object lock = new Object();
    private SharedIndexInformer<Service> services;
    private SharedIndexInformer<EndpointSlice> slices;

    public KubernetesServices(KubernetesClient client, String nodeName, Consumer<Map<String, ServiceInfo>> sink) {
        this.client = client;
        this.nodeName = nodeName;
        this.sink = sink;
    }

    /** Starts both informers (all namespaces); the first map is handed on once both have listed. */
    public void start() {
        ResourceEventHandler<Object> onChange = new ResourceEventHandler<>() {
            @Override
            public void onAdd(Object o) {
                publish();
            }

            @Override
            public void onUpdate(Object a, Object b) {
                publish();
            }

            @Override
            public void onDelete(Object o, boolean unknownFinalState) {
                publish();
            }
        };
        synchronized (lock) {
            services = client.services().inAnyNamespace().inform(cast(onChange), 0);
            slices = client.discovery().v1().endpointSlices().inAnyNamespace().inform(cast(onChange), 0);
        }
        publish();
    }

    @SuppressWarnings("unchecked")
    private static <T> ResourceEventHandler<T> cast(ResourceEventHandler<Object> h) {
        return (ResourceEventHandler<T>) (ResourceEventHandler<?>) h;
    }

    /**
     * Hands on the current map. Under the lock, sink call included: the two informers' threads
     * publish concurrently, and an older map must never be handed on after a newer one.
     */
    private void publish() {
        synchronized (lock) {
            if (services == null || slices == null || !services.hasSynced() || !slices.hasSynced()) {
                return;
            }
            sink.accept(infos(services.getStore().list(), slices.getStore().list(), nodeName));
        }
    }

    /** {@return one entry per service, by {@code namespace/name}}, as seen from {@code nodeName} */
    public static Map<String, ServiceInfo> infos(Collection<Service> services, Collection<EndpointSlice> slices,
                                                 String nodeName) {
        Map<String, List<EndpointSlice>> byService = new HashMap<>();
        for (EndpointSlice s : slices) {
            Map<String, String> labels = s.getMetadata().getLabels();
            String svc = labels == null ? null : labels.get(SERVICE_NAME_LABEL);
            if (svc != null) {
                byService.computeIfAbsent(s.getMetadata().getNamespace() + "/" + svc, k -> new ArrayList<>()).add(s);
            }
        }
        Map<String, ServiceInfo> out = new TreeMap<>();
        for (Service s : services) {
            String key = s.getMetadata().getNamespace() + "/" + s.getMetadata().getName();
            out.put(key, info(key, s, byService.getOrDefault(key, List.of()), nodeName));
        }
        return out;
    }

    static ServiceInfo info(String key, Service s, List<EndpointSlice> slices, String nodeName) {
        ServiceSpec spec = s.getSpec();
        Set<String> cluster = new LinkedHashSet<>();
        List<String> external = new ArrayList<>();
        Set<String> lb = new LinkedHashSet<>();
        boolean extLocal = false;
        boolean intLocal = false;
        if (spec != null) {
            if (spec.getClusterIPs() != null) {
                cluster.addAll(spec.getClusterIPs());
            }
            if (spec.getClusterIP() != null) {
                cluster.add(spec.getClusterIP());
            }
            cluster.remove("None");
            cluster.remove("");
            if (spec.getExternalIPs() != null) {
                external.addAll(spec.getExternalIPs());
            }
            if (spec.getLoadBalancerIP() != null && !spec.getLoadBalancerIP().isEmpty()) {
                lb.add(spec.getLoadBalancerIP());
            }
            extLocal = "Local".equals(spec.getExternalTrafficPolicy());
            intLocal = "Local".equals(spec.getInternalTrafficPolicy());
        }
        if (s.getStatus() != null && s.getStatus().getLoadBalancer() != null
                && s.getStatus().getLoadBalancer().getIngress() != null) {
            for (LoadBalancerIngress in : s.getStatus().getLoadBalancer().getIngress()) {
                if (in.getIp() != null && !in.getIp().isEmpty()) {
                    lb.add(in.getIp());
                }
            }
        }
        return new ServiceInfo(key, List.copyOf(cluster), external, List.copyOf(lb), extLocal, intLocal,
                hasLocalEndpoint(slices, nodeName));
    }

    /** A ready endpoint on this node: {@code nodeName} matches and {@code conditions.ready} is not false. */
    private static boolean hasLocalEndpoint(List<EndpointSlice> slices, String nodeName) {
        for (EndpointSlice s : slices) {
            if (s.getEndpoints() == null) {
                continue;
            }
            for (Endpoint e : s.getEndpoints()) {
                boolean ready = e.getConditions() == null || !Boolean.FALSE.equals(e.getConditions().getReady());
                if (nodeName.equals(e.getNodeName()) && ready) {
                    return true;
                }
            }
        }
        return false;
    }

    @Override
    public void close() {
        synchronized (lock) {
            if (services != null) {
                services.close();
            }
            if (slices != null) {
                slices.close();
            }
        }
        log.debug("stopped watching Services and EndpointSlices");
    }
}
