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
 *
 * <p>Dual-stack ({@link #MultiNodeCluster(TestDatastore, Backend, boolean)}, namespaces prefixed
 * {@code v6-}): every node also has {@code fd00:30:<subnet>::<10+n>/64} on its underlay (the bridge
 * {@code ::fe}), {@code spec.bgp.ipv6Address}, an IPv6 block {@code fd00:75:0:<n>::/122} affine to it
 * and {@code ipv6VXLANTunnelAddr} its first address (no MAC: felix derives it from {@code <name>-v6});
 * {@link #pool} also writes pool {@link #POOL_V6} {@link #POOL_V6_CIDR} with the same VXLAN mode; each
 * pod also gets the next IPv6 address of its node's block ({@link #ipv6}), {@code default via
 * fe80::ecee:eeff:feee:eeee dev eth0} (the host side's link-local address from Calico's
 * {@code ee:ee:ee:ee:ee:ee}), and a TCP listener there. IPv6 addresses are added without duplicate
 * address detection, so they are usable at once.
 */
final class MultiNodeCluster implements AutoCloseable {

    static final String POOL = "default-ipv4-ippool";
    static final String POOL_CIDR = "10.75.0.0/16";
    static final int TCP_PORT = 8080;
    static final String POOL_V6 = "default-ipv6-ippool";
    static final String POOL_V6_CIDR = "fd00:75::/48";
    /** The pod's IPv6 gateway: the link-local address of Calico's host-side MAC {@code ee:ee:ee:ee:ee:ee}. */
    static final String GATEWAY_V6 = "fe80::ecee:eeff:feee:eeee";

    /**
     * One node: its name, namespace, underlay address (bare) and subnet, block and tunnel address; on a
     * dual-stack cluster also its IPv6 underlay address, block and VXLAN tunnel address (else null).
     */
    record ClusterNode(String name, NetNs netns, String address, int subnet, String block, String tunnelAddress,
                       String address6, String block6, String tunnelAddress6) {
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
    private final boolean dualStack;
    private final String namespacePrefix;
    /** Each node's BIRD, configured by an in-process confd ({@link #startBird}). */
    private final Map<String, BirdNode> birds = new LinkedHashMap<>();
    private java.nio.file.Path birdDir;

    /** One node's confd (daemon + its syncer over the cluster's datastore) and BIRD process. */
    private record BirdNode(calico.libcalico.syncer.WatcherSyncer syncer, calico.confd.daemon.ConfdDaemon confd,
                            Process bird, java.nio.file.Path dir) {
        void close() {
            syncer.close();
            confd.close();
            bird.destroy();
            try {
                if (!bird.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
                    bird.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
    /** Each pod's IPv6 address on a dual-stack cluster, by namespace/name. */
    private final Map<String, String> podIpv6 = new LinkedHashMap<>();

    /**
     * @param datastore where the resources go (its {@link TestDatastore#reset} is the caller's); the
     *                  store and objects this opens are closed with the cluster
     * @param backend   the policy backend every felix uses
     */
    MultiNodeCluster(TestDatastore datastore, Backend backend) {
        this(datastore, backend, false);
    }

    /** As above; {@code dualStack}: IPv6 beside IPv4 (see the class comment), namespaces prefixed {@code v6-}. */
    MultiNodeCluster(TestDatastore datastore, Backend backend, boolean dualStack) {
        this(datastore, backend, dualStack, dualStack ? "v6-" : "rt-");
    }

    /** As above, with the namespaces prefixed {@code namespacePrefix} (a test's own part of the machine). */
    MultiNodeCluster(TestDatastore datastore, Backend backend, boolean dualStack, String namespacePrefix) {
        this.dualStack = dualStack;
        this.namespacePrefix = namespacePrefix;
        this.store = datastore.open();
        this.objects = datastore.clusterObjects();
        this.datastoreArgs = datastore.felixArgs();
        this.backend = backend;
        try {
            if (store.get(ResourceKey.of(ResourceKind.CLUSTER_INFORMATION, "default")).isEmpty()) {
                Writes.clusterReady(store); // a kube control plane is shared by a test class's tests
            }
            underlay = ns("ul");
            underlay.exec("sysctl", "-qw", "net.ipv4.ip_forward=1");
            if (dualStack) {
                underlay.exec("sysctl", "-qw", "net.ipv6.conf.all.forwarding=1");
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** Creates or changes the one IPPool's encapsulation modes. */
    void pool(EncapsulationMode vxlan, EncapsulationMode ipip) {
        Writes.upsert(store, new IPPool(ObjectMeta.named(POOL),
                new IPPoolSpec(POOL_CIDR, vxlan, ipip, false, false, null, 26, null, null, null, null)));
        if (dualStack) {
            Writes.upsert(store, new IPPool(ObjectMeta.named(POOL_V6), new IPPoolSpec(POOL_V6_CIDR, vxlan,
                    EncapsulationMode.Never, false, false, null, 122, null, null, null, null)));
        }
    }

    /** Adds node {@code name} (the {@code index}-th, 1-based: block 10.75.index.0/26) on underlay subnet {@code subnet}. */
    ClusterNode addNode(String name, int index, int subnet) {
        String bridge = "br" + subnet;
        if (subnets.add(subnet)) {
            underlay.exec("ip", "link", "add", bridge, "type", "bridge");
            underlay.exec("ip", "addr", "add", "172.30." + subnet + ".254/24", "dev", bridge);
            underlay.exec("ip", "link", "set", bridge, "up");
            if (dualStack) {
                underlay.exec("ip", "addr", "add", "fd00:30:" + subnet + "::fe/64", "dev", bridge, "nodad");
            }
        }
        NetNs n = ns("n" + index);
        String address = "172.30." + subnet + "." + (10 + index);
        String port = "ul" + index;
        ports.put(name, port);
        underlay.veth(port, n, "eth0");
        underlay.exec("ip", "link", "set", port, "master", bridge);
        n.exec("ip", "addr", "add", address + "/24", "dev", "eth0");
        n.exec("ip", "route", "add", "default", "via", "172.30." + subnet + ".254");
        n.exec("sysctl", "-qw", "net.ipv4.ip_forward=1");
        String address6 = null;
        String block6 = null;
        String tunnel6 = null;
        if (dualStack) {
            address6 = "fd00:30:" + subnet + "::" + (10 + index);
            block6 = "fd00:75:0:" + index + "::/122";
            tunnel6 = "fd00:75:0:" + index + "::";
            n.exec("sysctl", "-qw", "net.ipv6.conf.all.forwarding=1");
            n.exec("ip", "addr", "add", address6 + "/64", "dev", "eth0", "nodad");
            n.exec("ip", "-6", "route", "add", "default", "via", "fd00:30:" + subnet + "::fe");
            Writes.upsert(store, new IPAMBlock(ObjectMeta.named(IpamNames.blockName(Cidr.parse(block6))),
                    emptyBlock(block6, name)));
        }
        objects.node(name);
        String block = "10.75." + index + ".0/26";
        String tunnel = "10.75." + index + ".0";
        Writes.upsert(store, new Node(ObjectMeta.named(name), new NodeSpec(
                new NodeSpec.BGP(null, address + "/24", address6 == null ? null : address6 + "/64", null, null), tunnel,
                null, tunnel6, null, null, null, null, null)));
        Writes.upsert(store, new IPAMBlock(ObjectMeta.named(IpamNames.blockName(Cidr.parse(block))),
                emptyBlock(block, name)));
        ClusterNode node = new ClusterNode(name, n, address, subnet, block, tunnel, address6, block6, tunnel6);
        nodes.put(name, node);
        podsPerNode.put(name, 0);
        return node;
    }

    /**
     * Starts BIRD in {@code node}'s namespace as calico-node does: confd (in process, confd-service's
     * daemon over a syncer of the cluster's datastore) renders {@code bird.cfg} from the BGP resources,
     * Nodes, pools and block affinities (written here for the node's blocks, as Calico IPAM confirms
     * them), and BIRD starts on the first configuration BIRD's own check accepted; returns once BIRD
     * answers on its control socket. The node-to-node mesh (no BGPConfiguration: Calico's defaults,
     * AS 64512) then carries each node's blocks to the others' kernels ({@code proto bird}).
     */
    void startBird(ClusterNode node) {
        try {
            if (birdDir == null) {
                birdDir = java.nio.file.Files.createTempDirectory(namespacePrefix + "bird-");
            }
            java.nio.file.Path dir = java.nio.file.Files.createDirectories(birdDir.resolve(node.name()));
            for (String block : node.block6() == null ? List.of(node.block()) : List.of(node.block(), node.block6())) {
                Writes.upsert(store, new calico.api.model.BlockAffinity(ObjectMeta.named(
                        IpamNames.affinityName(node.name(), Cidr.parse(block))),
                        calico.api.model.BlockAffinitySpec.of(calico.api.model.BlockAffinitySpec.CONFIRMED, node.name(),
                                block)));
            }
            java.nio.file.Path config = dir.resolve("bird.cfg");
            java.nio.file.Path socket = dir.resolve("bird.ctl");
            calico.libcalico.bird.BirdControl control = new calico.libcalico.bird.BirdControl(socket, Duration.ofSeconds(10));
            calico.confd.daemon.ConfdDaemon confd = new calico.confd.daemon.ConfdDaemon(node.name(), "",
                    new calico.confd.render.BirdConfigBuilder(calico.confd.render.SecretSource.none()),
                    new calico.confd.bird.ConfigFile(config, new calico.confd.bird.BirdValidator(BIRD)), control,
                    Duration.ofSeconds(1));
            calico.libcalico.syncer.WatcherSyncer syncer = new calico.libcalico.syncer.WatcherSyncer(store,
                    calico.confd.model.BgpStore.KINDS, confd);
            syncer.start();
            calico.libcalico.testing.Await.until("confd's bird.cfg for " + node.name(), Duration.ofSeconds(60),
                    () -> java.nio.file.Files.exists(config));
            Process bird = new ProcessBuilder("ip", "netns", "exec", node.netns().name(), BIRD, "-f", "-c",
                    config.toString(), "-s", socket.toString(), "-P", dir.resolve("bird.pid").toString())
                    .redirectErrorStream(true).redirectOutput(dir.resolve("bird.log").toFile()).start();
            birds.put(node.name(), new BirdNode(syncer, confd, bird, dir));
            calico.libcalico.testing.Await.until("BIRD of " + node.name() + " answering", Duration.ofSeconds(30), () -> {
                if (!bird.isAlive()) {
                    throw new IllegalStateException("BIRD of " + node.name() + " exited: " + birdLog(dir));
                }
                try {
                    control.command("show status");
                    return true;
                } catch (java.io.IOException notYet) {
                    return false;
                }
            });
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static String birdLog(java.nio.file.Path dir) {
        try {
            return java.nio.file.Files.readString(dir.resolve("bird.log"));
        } catch (java.io.IOException e) {
            return "(no log: " + e + ")";
        }
    }

    /**
     * Stops what still runs in {@code n} (felix leaves WireGuard's wireguard-go daemons with their
     * devices, as on a real node): a deleted namespace would otherwise live on around them.
     */
    private static void killProcessesIn(NetNs n) {
        try {
            Process p = new ProcessBuilder("ip", "netns", "pids", n.name()).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.US_ASCII);
            p.waitFor();
            for (String pid : out.strip().split("\\s+")) {
                if (pid.matches("\\d+")) {
                    ProcessHandle.of(Long.parseLong(pid)).ifPresent(ProcessHandle::destroy);
                }
            }
        } catch (java.io.IOException e) {
            // best effort: the namespace is deleted anyway
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Debian's BIRD 2. */
    static final String BIRD = "/usr/sbin/bird";

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
        NetNs w = ns("p");
        Cluster.wireAsCni(node.netns(), iface, w, ip);
        String ip6 = node.tunnelAddress6() == null ? null : node.tunnelAddress6() + Integer.toHexString(k);
        if (ip6 != null) {
            // As Calico's CNI plugin leaves an IPv6 pod: the host side answers as fe80::ecee:eeff:feee:eeee.
            node.netns().exec("ip", "-6", "addr", "add", GATEWAY_V6 + "/64", "dev", iface, "nodad");
            w.exec("ip", "-6", "addr", "add", ip6 + "/128", "dev", "eth0", "nodad");
            w.exec("ip", "-6", "route", "add", "default", "via", GATEWAY_V6, "dev", "eth0");
            podIpv6.put(namespace + "/" + name, ip6);
        }
        podMtu(node).ifPresent(mtu -> {
            // Calico's CNI plugin gives both ends of the veth the MTU felix wrote.
            node.netns().exec("ip", "link", "set", iface, "mtu", Integer.toString(mtu));
            w.exec("ip", "link", "set", "eth0", "mtu", Integer.toString(mtu));
        });
        listeners.add(w.tcpListener(ip, TCP_PORT));
        if (ip6 != null) {
            listeners.add(w.tcpListener(ip6, TCP_PORT));
        }
        KubePod pod = new KubePod(KubeObjectMeta.of(namespace, name, Map.of("app", name)),
                new KubePod.Spec(node.name(), "default", false, List.of(new KubePod.Container("main", List.of())), null),
                new KubePod.Status(ip, ip6 == null ? null : List.of(new KubePod.PodIP(ip), new KubePod.PodIP(ip6)),
                        "Running"));
        objects.pod(pod);
        pods.add(pod);
        return new Workload(namespace, name, ip, iface, w);
    }

    /** {@return {@code pod}'s IPv6 address} on a dual-stack cluster. */
    String ipv6(Workload pod) {
        String ip6 = podIpv6.get(pod.namespace() + "/" + pod.pod());
        if (ip6 == null) {
            throw new IllegalStateException(pod + " has no IPv6 address: the cluster is not dual-stack");
        }
        return ip6;
    }

    /** Creates or replaces a {@code networking.k8s.io/v1} NetworkPolicy ({@code manifest}: its whole YAML). */
    void networkPolicy(String manifest) {
        objects.networkPolicy(manifest, new calico.api.k8s.KubernetesObjects().parse(manifest,
                calico.api.k8s.KubeNetworkPolicy.class));
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
        BirdNode bird = birds.remove(node.name());
        if (bird != null) {
            bird.close();
        }
        FelixProcess f = felixes.remove(node.name());
        if (f != null) {
            f.close();
        }
        store.delete(ResourceKey.of(ResourceKind.IPAM_BLOCK, IpamNames.blockName(Cidr.parse(node.block()))), null);
        if (node.block6() != null) {
            store.delete(ResourceKey.of(ResourceKind.IPAM_BLOCK, IpamNames.blockName(Cidr.parse(node.block6()))), null);
        }
        objects.deleteNode(node.name());
        nodes.remove(node.name());
    }

    /** An affine block with every ordinal free (addresses here are handed out by the fixture, not IPAM). */
    static IPAMBlockSpec emptyBlock(String cidr, String node) {
        Cidr c = Cidr.parse(cidr);
        int size = 1 << ((c.version() == 4 ? 32 : 128) - c.prefixLength());
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

    /** A namespace named {@code <prefix><what>} ({@code rt-}, {@code v6-} on a dual-stack cluster, unless given), unique. */
    private NetNs ns(String what) {
        NetNs n = NetNs.create(namespacePrefix + what);
        namespaces.add(n);
        return n;
    }

    /**
     * Stops every felix, deletes the namespaces, and takes the pods, nodes, their blocks and the pool
     * out of the datastore (a kube control plane outlives one test).
     */
    @Override
    public void close() {
        birds.values().forEach(BirdNode::close);
        birds.clear();
        if (birdDir != null) {
            try (java.util.stream.Stream<java.nio.file.Path> files = java.nio.file.Files.walk(birdDir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            } catch (java.io.IOException e) {
                // best effort: a temporary directory
            }
        }
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
        for (String pool : List.of(POOL, POOL_V6)) {
            try {
                store.delete(ResourceKey.of(ResourceKind.IP_POOL, pool), null);
            } catch (RuntimeException e) {
                // absent or gone
            }
        }
        listeners.forEach(NetNs.Listener::close);
        namespaces.forEach(MultiNodeCluster::killProcessesIn);
        namespaces.forEach(NetNs::close);
        objects.close();
        store.close();
    }
}
