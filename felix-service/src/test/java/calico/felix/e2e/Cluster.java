package calico.felix.e2e;

import calico.api.k8s.KubeNamespace;
import calico.api.k8s.KubeNetworkPolicy;
import calico.api.k8s.KubeObjectMeta;
import calico.api.k8s.KubePod;
import calico.api.k8s.KubeServiceAccount;
import calico.api.k8s.KubernetesObjects;
import calico.api.k8s.WorkloadEndpointNames;
import calico.dataplane.testing.NetNs;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A Kubernetes cluster made of network namespaces: the nodes' namespaces felix programs
 * ({@link PodHosts}: one node, or two with VXLAN between them) and one namespace per pod, wired
 * as Calico's CNI plugin leaves them (pod side only: {@code eth0} with a /32 and {@code default
 * via 169.254.1.1 dev eth0 onlink}; the host side {@code cali…} is up and nothing more: routes
 * and proxy ARP are felix's job). The same cluster's Kubernetes objects
 * (namespaces, service accounts, pods, NetworkPolicies) go to {@link ClusterObjects}: converted
 * into the Calico resources Calico's Kubernetes datastore would present (etcd), or real objects
 * in a kube-apiserver (the kubernetes datastore).
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
    private static final KubernetesObjects KUBE = new KubernetesObjects();

    /** The first node's namespace: the only one in a one-node cluster. */
    final NetNs host;
    final Workload web;
    final Workload api;
    final Workload client;
    final Workload db;

    private final ClusterObjects objects;
    private final PodHosts hosts;
    private final List<NetNs> namespaces = new ArrayList<>();
    private final List<NetNs.Listener> listeners = new ArrayList<>();
    private final Map<String, KubeNamespace> kubeNamespaces = new LinkedHashMap<>();
    private final Map<String, KubeServiceAccount> serviceAccounts = new LinkedHashMap<>();
    private final Map<String, KubePod> pods = new LinkedHashMap<>();
    /** NetworkPolicy manifests by namespace/name. */
    private final Map<String, String> networkPolicies = new LinkedHashMap<>();

    /** Creates the cluster on one node; {@code objects} is closed with it. */
    Cluster(ClusterObjects objects) {
        this(objects, PodHosts.oneNode());
    }

    /** Creates the cluster with its pods on {@code hosts}' nodes; {@code objects} and {@code hosts} are closed with it. */
    Cluster(ClusterObjects objects, PodHosts hosts) {
        this.objects = objects;
        this.hosts = hosts;
        this.host = hosts.hosts().get(0).netns();
        try {
            relabelNamespace("prod", Map.of("env", "prod", "team", "blue"));
            relabelNamespace("dev", Map.of("env", "dev"));
            relabelServiceAccount("prod", "frontend", Map.of("role", "fe"));
            relabelServiceAccount("prod", "backend", Map.of("role", "be"));
            relabelServiceAccount("dev", "default", Map.of());
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

    /** {@return the nodes the pods are on}. */
    List<PodHosts.Host> hosts() {
        return hosts.hosts();
    }

    /** {@return the namespace of the node {@code w} runs on} (where its {@code cali…} interface is). */
    NetNs hostOf(Workload w) {
        return hosts.hostFor(w.namespace()).netns();
    }

    List<Workload> workloads() {
        return List.of(web, api, client, db);
    }

    /** Creates or relabels a Kubernetes namespace; {@return its labels before} (empty: it did not exist). */
    Optional<Map<String, String>> relabelNamespace(String name, Map<String, String> labels) {
        KubeNamespace n = new KubeNamespace(KubeObjectMeta.of(null, name, labels));
        objects.namespace(n);
        return Optional.ofNullable(kubeNamespaces.put(name, n)).map(old -> old.metadata().labels());
    }

    /** Creates or relabels a service account; {@return its labels before} (empty: it did not exist). */
    Optional<Map<String, String>> relabelServiceAccount(String namespace, String name, Map<String, String> labels) {
        KubeServiceAccount sa = new KubeServiceAccount(KubeObjectMeta.of(namespace, name, labels));
        objects.serviceAccount(sa);
        return Optional.ofNullable(serviceAccounts.put(namespace + "/" + name, sa)).map(old -> old.metadata().labels());
    }

    /** Relabels a pod; {@return its labels before}. */
    Map<String, String> relabelPod(Workload w, Map<String, String> labels) {
        KubePod old = pods.get(w.toString());
        KubeObjectMeta m = old.metadata();
        KubePod pod = new KubePod(KubeObjectMeta.of(m.namespace(), m.name(), labels), old.spec(), old.status());
        objects.pod(pod);
        pods.put(w.toString(), pod);
        return m.labels();
    }

    /**
     * Creates or replaces a {@code networking.k8s.io/v1} NetworkPolicy ({@code text}: its YAML without
     * {@code apiVersion} and {@code kind}).
     */
    void applyNetworkPolicy(String text) {
        String manifest = manifest(text);
        KubeNetworkPolicy np = KUBE.parse(manifest, KubeNetworkPolicy.class);
        objects.networkPolicy(manifest, np);
        networkPolicies.put(id(np), text);
    }

    /** {@return the namespace/name of the NetworkPolicy {@code text} describes}. */
    String networkPolicyId(String text) {
        return id(KUBE.parse(manifest(text), KubeNetworkPolicy.class));
    }

    private static String id(KubeNetworkPolicy np) {
        return np.metadata().namespace() + "/" + np.metadata().name();
    }

    private static String manifest(String text) {
        return "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\n" + text;
    }

    /** Creates or replaces an AdminNetworkPolicy or the BaselineAdminNetworkPolicy ({@code manifest}: its whole YAML). */
    void applyAdminPolicy(String manifest) {
        objects.adminPolicy(manifest);
    }

    void deleteAdminPolicy(String kind, String name) {
        objects.deleteAdminPolicy(kind, name);
    }

    /** {@return the YAML the NetworkPolicy {@code namespace/name} was applied with}, if it exists. */
    Optional<String> networkPolicy(String id) {
        return Optional.ofNullable(networkPolicies.get(id));
    }

    /** Deletes the NetworkPolicy {@code namespace/name}. */
    void deleteNetworkPolicy(String id) {
        String[] nsName = id.split("/", 2);
        objects.deleteNetworkPolicy(nsName[0], nsName[1]);
        networkPolicies.remove(id);
    }

    private Workload pod(String namespace, String name, String sa, String ip, Map<String, String> labels,
            List<KubePod.ContainerPort> ports) {
        KubePod pod = new KubePod(KubeObjectMeta.of(namespace, name, labels),
                new KubePod.Spec(hosts.hostFor(namespace).node(), sa, false, List.of(new KubePod.Container("main", ports)), null),
                new KubePod.Status(ip, null, "Running"));
        String iface = WorkloadEndpointNames.interfaceName(namespace, name);
        NetNs w = ns("e2e" + name.charAt(0));
        wireAsCni(hosts.hostFor(namespace).netns(), iface, w, ip);
        for (int port : TCP_PORTS) {
            listeners.add(w.tcpListener(ip, port));
        }
        for (int port : UDP_PORTS) {
            listeners.add(w.udpEcho(ip, port));
        }
        objects.pod(pod);
        pods.put(namespace + "/" + name, pod);
        return new Workload(namespace, name, ip, iface, w);
    }

    /**
     * Makes {@code w} dual-stack, as Calico's CNI plugin leaves an IPv6 pod: {@code ip6}/128 on its
     * {@code eth0} with {@code default via fe80::ecee:eeff:feee:eeee} (the host side's link-local
     * address, from the MAC {@code ee:ee:ee:ee:ee:ee} the plugin gives it), the pod's
     * {@code status.podIPs} both addresses (its WorkloadEndpoint gains the /128), and the same
     * listeners on {@code ip6}. Call it before felix starts: the host side goes down and up.
     */
    void addIpv6(Workload w, String ip6) {
        NetNs host = hostOf(w);
        String iface = w.interfaceName();
        host.exec("sysctl", "-qw", "net.ipv6.conf." + iface + ".accept_dad=0");
        host.exec("ip", "link", "set", iface, "down");
        host.exec("ip", "link", "set", iface, "address", "ee:ee:ee:ee:ee:ee");
        host.exec("ip", "link", "set", iface, "up");
        NetNs pod = w.netns();
        pod.exec("sysctl", "-qw", "net.ipv6.conf.eth0.accept_dad=0");
        pod.exec("ip", "-6", "addr", "add", ip6 + "/128", "dev", "eth0", "nodad");
        pod.exec("ip", "-6", "route", "add", "default", "via", "fe80::ecee:eeff:feee:eeee", "dev", "eth0");
        for (int port : TCP_PORTS) {
            listeners.add(pod.tcpListener(ip6, port));
        }
        KubePod old = pods.get(w.toString());
        KubePod pod6 = new KubePod(old.metadata(), old.spec(), new KubePod.Status(w.ip(),
                List.of(new KubePod.PodIP(w.ip()), new KubePod.PodIP(ip6)), old.status().phase()));
        objects.pod(pod6);
        pods.put(w.toString(), pod6);
    }

    /**
     * Wires {@code pod} to {@code host} as Calico's CNI plugin leaves it: veth {@code iface} ↔ the
     * pod's {@code eth0} (both up), the pod's /32, and its {@code default via 169.254.1.1 dev eth0
     * onlink}; the host side gets nothing more (routes and proxy ARP are felix's job).
     */
    static void wireAsCni(NetNs host, String iface, NetNs pod, String ip) {
        host.veth(iface, pod, "eth0");
        pod.exec("ip", "addr", "add", ip + "/32", "dev", "eth0");
        pod.exec("ip", "route", "add", "default", "via", "169.254.1.1", "dev", "eth0", "onlink");
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
        objects.close();
        hosts.close();
    }
}
