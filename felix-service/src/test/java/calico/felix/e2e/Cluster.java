package calico.felix.e2e;

import calico.api.k8s.KubeNamespace;
import calico.api.k8s.KubeObjectMeta;
import calico.api.k8s.KubePod;
import calico.api.k8s.KubeServiceAccount;
import calico.api.k8s.KubernetesConverter;
import calico.api.k8s.WorkloadEndpointNames;
import calico.api.model.Resource;
import calico.dataplane.testing.NetNs;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A one-node Kubernetes cluster made of network namespaces: felix's "host" namespace and one
 * namespace per pod, wired as Calico's CNI plugin leaves them (pod side only: {@code eth0} with
 * a /32 and {@code default via 169.254.1.1 dev eth0 onlink}; the host side {@code cali…} is up
 * and nothing more: routes and proxy ARP are felix's job). The datastore view of the same
 * cluster (namespace and service-account profiles, workload endpoints) comes from the
 * Kubernetes objects through {@link KubernetesConverter}, exactly as Calico's Kubernetes
 * datastore would present them.
 *
 * <p>Two Kubernetes namespaces: {@code prod} (labels env=prod, team=blue) with {@code web}
 * (service account {@code frontend}, labels role=fe) and {@code api} (service account
 * {@code backend}, named ports {@code http-alt} TCP 8080 and {@code dns} UDP 53); {@code dev}
 * (env=dev) with {@code client} and {@code db} (service account {@code default}). Every pod
 * listens on TCP {@link #TCP_PORTS} and echoes UDP on {@link #UDP_PORTS}.
 */
final class Cluster implements AutoCloseable {

    static final String NODE = "e2e-node";
    static final int[] TCP_PORTS = {80, 8080, 8081, 9000};
    static final int[] UDP_PORTS = {53, 5353};

    final NetNs host;
    final Workload web;
    final Workload api;
    final Workload client;
    final Workload db;

    private final List<NetNs> namespaces = new ArrayList<>();
    private final List<NetNs.Listener> listeners = new ArrayList<>();
    private final KubernetesConverter converter = new KubernetesConverter();
    private final Map<String, KubeNamespace> kubeNamespaces = new LinkedHashMap<>();
    private final Map<String, KubeServiceAccount> serviceAccounts = new LinkedHashMap<>();
    private final Map<String, KubePod> pods = new LinkedHashMap<>();

    Cluster() {
        try {
            host = ns("e2eh");
            // Node wiring a real host has anyway: forwarding on, and an uplink with the default
            // route (proxy ARP answers only for addresses routed out of another interface).
            host.exec("sysctl", "-qw", "net.ipv4.ip_forward=1");
            host.uplink();

            namespace("prod", Map.of("env", "prod", "team", "blue"));
            namespace("dev", Map.of("env", "dev"));
            serviceAccount("prod", "frontend", Map.of("role", "fe"));
            serviceAccount("prod", "backend", Map.of("role", "be"));
            serviceAccount("dev", "default", Map.of());
            web = pod("prod", "web", "frontend", "10.70.0.1", Map.of("app", "web"),
                    List.of(new KubePod.ContainerPort("http", 80, "TCP", 0, null)));
            api = pod("prod", "api", "backend", "10.70.0.2", Map.of("app", "api"),
                    List.of(new KubePod.ContainerPort("http-alt", 8080, "TCP", 0, null),
                            new KubePod.ContainerPort("dns", 53, "UDP", 0, null)));
            client = pod("dev", "client", "default", "10.70.1.1", Map.of("app", "client"), List.of());
            db = pod("dev", "db", "default", "10.70.1.2", Map.of("app", "db"), List.of());
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    List<Workload> workloads() {
        return List.of(web, api, client, db);
    }

    /** {@return every Calico resource the cluster's Kubernetes objects convert to}. */
    List<Resource> resources() {
        List<Resource> out = new ArrayList<>();
        kubeNamespaces.values().forEach(n -> out.add(converter.namespaceProfile(n)));
        serviceAccounts.values().forEach(sa -> out.add(converter.serviceAccountProfile(sa)));
        pods.values().forEach(p -> out.add(converter.workloadEndpoint(p).orElseThrow()));
        return out;
    }

    /** {@return the namespace's profile after relabelling the Kubernetes namespace}. */
    Resource relabelNamespace(String name, Map<String, String> labels) {
        KubeNamespace n = new KubeNamespace(KubeObjectMeta.of(null, name, labels));
        kubeNamespaces.put(name, n);
        return converter.namespaceProfile(n);
    }

    /** {@return the service account's profile after relabelling it}. */
    Resource relabelServiceAccount(String namespace, String name, Map<String, String> labels) {
        KubeServiceAccount sa = new KubeServiceAccount(KubeObjectMeta.of(namespace, name, labels));
        serviceAccounts.put(namespace + "/" + name, sa);
        return converter.serviceAccountProfile(sa);
    }

    /** {@return the pod's workload endpoint after relabelling the pod}. */
    Resource relabelPod(Workload w, Map<String, String> labels) {
        KubePod old = pods.get(w.toString());
        KubeObjectMeta m = old.metadata();
        KubePod pod = new KubePod(KubeObjectMeta.of(m.namespace(), m.name(), labels), old.spec(), old.status());
        pods.put(w.toString(), pod);
        return converter.workloadEndpoint(pod).orElseThrow();
    }

    private void namespace(String name, Map<String, String> labels) {
        kubeNamespaces.put(name, new KubeNamespace(KubeObjectMeta.of(null, name, labels)));
    }

    private void serviceAccount(String namespace, String name, Map<String, String> labels) {
        serviceAccounts.put(namespace + "/" + name, new KubeServiceAccount(KubeObjectMeta.of(namespace, name, labels)));
    }

    private Workload pod(String namespace, String name, String sa, String ip, Map<String, String> labels,
            List<KubePod.ContainerPort> ports) {
        KubePod pod = new KubePod(KubeObjectMeta.of(namespace, name, labels),
                new KubePod.Spec(NODE, sa, false, List.of(new KubePod.Container("main", ports)), null),
                new KubePod.Status(ip, null, "Running"));
        pods.put(namespace + "/" + name, pod);
        String iface = WorkloadEndpointNames.interfaceName(namespace, name);
        NetNs w = ns("e2e" + name.charAt(0));
        host.veth(iface, w, "eth0");
        w.exec("ip", "addr", "add", ip + "/32", "dev", "eth0");
        w.exec("ip", "route", "add", "default", "via", "169.254.1.1", "dev", "eth0", "onlink");
        for (int port : TCP_PORTS) {
            listeners.add(w.tcpListener(ip, port));
        }
        for (int port : UDP_PORTS) {
            listeners.add(w.udpEcho(ip, port));
        }
        return new Workload(namespace, name, ip, iface, w);
    }

    private NetNs ns(String prefix) {
        NetNs n = NetNs.create(prefix);
        namespaces.add(n);
        return n;
    }

    @Override
    public void close() {
        listeners.forEach(NetNs.Listener::close);
        namespaces.forEach(NetNs::close);
    }
}
