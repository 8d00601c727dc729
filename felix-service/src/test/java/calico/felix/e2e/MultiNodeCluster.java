package calico.felix.e2e;

import calico.api.k8s.KubeNamespace;
import calico.api.k8s.KubeObjectMeta;
import calico.api.k8s.KubePod;
import calico.api.k8s.KubeServiceAccount;
import calico.api.k8s.WorkloadEndpointNames;
import calico.api.model.EncapsulationMode;
import calico.api.model.IPAMBlock;
import calico.api.model.IPAMBlockSpec;
import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.IpamNames;
import calico.api.model.Node;
import calico.api.model.NodeSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import calico.dataplane.testing.NetNs;
import calico.libcalico.datastore.Datastore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Several Calico nodes made of network namespaces, each with its own in-process felix, over one
 * real datastore: the reusable fixture for tests whose pods live on different nodes.
 *
 * <pre>
 *            underlay namespace (bridges br0, br1, ...; routes between them: the router)
 *        br0 172.30.0.254/24              br1 172.30.1.254/24
 *         │            │                   │
 *   node A eth0    node B eth0        node C eth0     (172.30.&lt;subnet&gt;.&lt;10+n&gt;/24, default via .254)
 *    │  cali… ─ pod eth0 (10.75.&lt;n&gt;.k/32, default via 169.254.1.1 onlink)
 *    └ felix A (FELIX_FELIXHOSTNAME=A, FELIX_DATAPLANENETNS=A's namespace)
 * </pre>
 *
 * <p>Per node it writes what calico-node's start-up and Calico IPAM would: the Node resource
 * ({@code spec.bgp.ipv4Address} with its subnet, {@code ipv4VXLANTunnelAddr} = the first
 * address of its block, no MAC: felix derives it), one IPAM block {@code 10.75.<n>.0/26} affine
 * to it; and one IPPool {@link #POOL_CIDR} whose modes {@link #pool} sets. Pods are wired as
 * Calico's CNI plugin leaves them (pod side only), with the MTU the node's felix wrote to its MTU
 * file when it runs (as the CNI plugin reads it; the interfaces' default without one), and written through {@link ClusterObjects}
 * (converted into WorkloadEndpoints on etcd, real Pods on the kubernetes datastore); each listens
 * on TCP {@link #TCP_PORT}. Namespaces are prefixed {@code rt-} and always deleted.
 */
final class MultiNodeCluster implements AutoCloseable {

    static final String POOL = "default-ipv4-ippool";
    static final String POOL_CIDR = "10.75.0.0/16";
    static final int TCP_PORT = 8080;

    /** One node: its name, namespace, underlay address (bare) and subnet, block and tunnel address. */
    record ClusterNode(String name, NetNs netns, String address, int subnet, String block, String tunnelAddress) {
        String underlayInterface() {
            return "eth0";
        }
    }

    private final Datastore store;
    private final ClusterObjects objects;
    private final List<String> datastoreArgs;
    private final Backend backend;
    private final NetNs underlay;
    private final List<NetNs> namespaces = new ArrayList<>();
    private final List<NetNs.Listener> listeners = new ArrayList<>();
    private final Map<String, ClusterNode> nodes = new LinkedHashMap<>();
    private final Map<String, FelixProcess> felixes = new LinkedHashMap<>();
    private final Map<String, Integer> podsPerNode = new LinkedHashMap<>();
    private final Map<String, String> ports = new LinkedHashMap<>();
    private final List<KubePod> pods = new ArrayList<>();
    private final java.util.Set<Integer> subnets = new java.util.HashSet<>();
    private final java.util.Set<String> kubeNamespaces = new java.util.HashSet<>();

    /**
     * @param datastore where the resources go (its {@link TestDatastore#reset} is the caller's); the
     *                  store and objects this opens are closed with the cluster
     * @param backend   the policy backend every felix uses
     */
    MultiNodeCluster(TestDatastore datastore, Backend backend) {
        this.store = datastore.open();
        this.objects = datastore.clusterObjects();
        this.datastoreArgs = datastore.felixArgs();
        this.backend = backend;
        try {
            if (store.get(ResourceKey.of(ResourceKind.CLUSTER_INFORMATION, "default")).isEmpty()) {
                Writes.clusterReady(store); // a kube control plane is shared by a test class's tests
            }
            underlay = ns("rt-ul");
            underlay.exec("sysctl", "-qw", "net.ipv4.ip_forward=1");
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** Creates or changes the one IPPool's encapsulation modes. */
    void pool(EncapsulationMode vxlan, EncapsulationMode ipip) {
        Writes.upsert(store, new IPPool(ObjectMeta.named(POOL),
                new IPPoolSpec(POOL_CIDR, vxlan, ipip, false, false, null, 26, null, null, null, null)));
    }

    /** Adds node {@code name} (the {@code index}-th, 1-based: block 10.75.index.0/26) on underlay subnet {@code subnet}. */
    ClusterNode addNode(String name, int index, int subnet) {
        String bridge = "br" + subnet;
        if (subnets.add(subnet)) {
            underlay.exec("ip", "link", "add", bridge, "type", "bridge");
            underlay.exec("ip", "addr", "add", "172.30." + subnet + ".254/24", "dev", bridge);
            underlay.exec("ip", "link", "set", bridge, "up");
        }
        NetNs n = ns("rt-n" + index);
        String address = "172.30." + subnet + "." + (10 + index);
        String port = "ul" + index;
        ports.put(name, port);
        underlay.veth(port, n, "eth0");
        underlay.exec("ip", "link", "set", port, "master", bridge);
        n.exec("ip", "addr", "add", address + "/24", "dev", "eth0");
        n.exec("ip", "route", "add", "default", "via", "172.30." + subnet + ".254");
        n.exec("sysctl", "-qw", "net.ipv4.ip_forward=1");
        objects.node(name);
        String block = "10.75." + index + ".0/26";
        String tunnel = "10.75." + index + ".0";
        Writes.upsert(store, new Node(ObjectMeta.named(name), new NodeSpec(
                new NodeSpec.BGP(null, address + "/24", null, null, null), tunnel, null, null, null, null, null, null,
                null)));
        Writes.upsert(store, new IPAMBlock(ObjectMeta.named(IpamNames.blockName(Cidr.parse(block))),
                emptyBlock(block, name)));
        ClusterNode node = new ClusterNode(name, n, address, subnet, block, tunnel);
        nodes.put(name, node);
        podsPerNode.put(name, 0);
        return node;
    }

    /** Starts felix for {@code node} and waits until it is ready (in sync, programmed). */
    FelixProcess startFelix(ClusterNode node, String... extraArgs) {
        FelixProcess f = new FelixProcess(node.name(), datastoreArgs, node.netns().name(), backend, "Info", extraArgs);
        felixes.put(node.name(), f);
        f.awaitReady(Duration.ofSeconds(60));
        return f;
    }

    /** Stops {@code node}'s felix and starts a new one (a felix restart: the kernel keeps what it had). */
    FelixProcess restartFelix(ClusterNode node, String... extraArgs) {
        FelixProcess old = felixes.remove(node.name());
        if (old != null) {
            old.close();
        }
        return startFelix(node, extraArgs);
    }

    /** A pod {@code namespace/name} on {@code node}, with the next address of the node's block. */
    Workload pod(ClusterNode node, String namespace, String name) {
        if (kubeNamespaces.add(namespace)) {
            objects.namespace(new KubeNamespace(KubeObjectMeta.of(null, namespace, Map.of())));
            objects.serviceAccount(new KubeServiceAccount(KubeObjectMeta.of(namespace, "default", Map.of())));
        }
        int k = podsPerNode.merge(node.name(), 1, Integer::sum);
        String ip = node.tunnelAddress().substring(0, node.tunnelAddress().lastIndexOf('.') + 1) + k;
        String iface = WorkloadEndpointNames.interfaceName(namespace, name);
        NetNs w = ns("rt-p");
        Cluster.wireAsCni(node.netns(), iface, w, ip);
        podMtu(node).ifPresent(mtu -> {
            // Calico's CNI plugin gives both ends of the veth the MTU felix wrote.
            node.netns().exec("ip", "link", "set", iface, "mtu", Integer.toString(mtu));
            w.exec("ip", "link", "set", "eth0", "mtu", Integer.toString(mtu));
        });
        listeners.add(w.tcpListener(ip, TCP_PORT));
        KubePod pod = new KubePod(KubeObjectMeta.of(namespace, name, Map.of("app", name)),
                new KubePod.Spec(node.name(), "default", false, List.of(new KubePod.Container("main", List.of())), null),
                new KubePod.Status(ip, null, "Running"));
        objects.pod(pod);
        pods.add(pod);
        return new Workload(namespace, name, ip, iface, w);
    }

    /** {@return the pod MTU in {@code node}'s felix's MTU file}, empty when no felix runs there or it wrote none yet. */
    java.util.OptionalInt podMtu(ClusterNode node) {
        FelixProcess f = felixes.get(node.name());
        if (f == null || !java.nio.file.Files.exists(f.mtuFile())) {
            return java.util.OptionalInt.empty();
        }
        try {
            return java.util.OptionalInt.of(Integer.parseInt(java.nio.file.Files.readString(f.mtuFile()).strip()));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Sets the MTU of {@code node}'s underlay link, both ends (its {@code eth0} and its bridge port). */
    void underlayMtu(ClusterNode node, int mtu) {
        underlay.exec("ip", "link", "set", ports.get(node.name()), "mtu", Integer.toString(mtu));
        node.netns().exec("ip", "link", "set", "eth0", "mtu", Integer.toString(mtu));
    }

    /** Removes {@code node} as decommissioning does: its felix stops, its Node resource and block go. */
    void removeNode(ClusterNode node) {
        FelixProcess f = felixes.remove(node.name());
        if (f != null) {
            f.close();
        }
        store.delete(ResourceKey.of(ResourceKind.IPAM_BLOCK, IpamNames.blockName(Cidr.parse(node.block()))), null);
        objects.deleteNode(node.name());
        nodes.remove(node.name());
    }

    /** An affine block with every ordinal free (addresses here are handed out by the fixture, not IPAM). */
    static IPAMBlockSpec emptyBlock(String cidr, String node) {
        int size = 1 << (32 - Cidr.parse(cidr).prefixLength());
        List<Integer> free = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            free.add(i);
        }
        return new IPAMBlockSpec(cidr, "host:" + node, null, java.util.Collections.nCopies(size, null), free, null, 0L,
                null, null, null);
    }

    FelixProcess felix(ClusterNode node) {
        return felixes.get(node.name());
    }

    Datastore store() {
        return store;
    }

    private NetNs ns(String prefix) {
        NetNs n = NetNs.create(prefix);
        namespaces.add(n);
        return n;
    }

    /**
     * Stops every felix, deletes the namespaces, and takes the pods, nodes, their blocks and the pool
     * out of the datastore (a kube control plane outlives one test).
     */
    @Override
    public void close() {
        felixes.values().forEach(FelixProcess::close);
        felixes.clear();
        for (KubePod p : pods) {
            try {
                objects.deletePod(p);
            } catch (RuntimeException e) {
                // best effort: the datastore may be gone already
            }
        }
        for (ClusterNode n : List.copyOf(nodes.values())) {
            try {
                removeNode(n);
            } catch (RuntimeException e) {
                // best effort: the datastore may be gone already
            }
        }
        try {
            store.delete(ResourceKey.of(ResourceKind.IP_POOL, POOL), null);
        } catch (RuntimeException e) {
            // absent or gone
        }
        listeners.forEach(NetNs.Listener::close);
        namespaces.forEach(NetNs::close);
        objects.close();
        store.close();
    }
}
