package calico.node.startup.steps;

import calico.api.model.Node;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.ipam.IpamClient;
import calico.libcalico.ipam.IpamOptions;
import calico.node.startup.autodetect.AddressDetector;
import java.util.List;
import java.util.Objects;

/**
 * calico-node's start-up, once, in Calico's order:
 *
 * <pre>
 *   NodeResource      the Node: addresses (IP/IP6 or autodetected), AS, interfaces, orchRef
 *        │
 *   DefaultPools      default-ipv4-ippool / default-ipv6-ippool, only when no pool of that version exists
 *        │
 *   ClusterDefaults   ClusterInformation (datastoreReady, clusterGUID, calicoVersion), tier default,
 *        │            FelixConfiguration default (+ node.&lt;name&gt; on etcd), BGP- and IPAMConfiguration default
 *   TunnelAddresses   IPIP / VXLAN / IPv6 VXLAN / WireGuard addresses from IPAM while a pool needs them (WireGuard:
 *                     while felix's key is published), else released; also alone: {@link #tunnelAddresses}
 * </pre>
 *
 * Idempotent: each step reads what is stored and writes only what is missing or different, so a
 * second run writes nothing ({@link Result#changes()} is empty). Failures are
 * {@link StartupException}s (bad or impossible settings, with what to change) or datastore errors.
 */
public final class NodeStartup {

    /**
     * What start-up is told.
     *
     * @param node          the Node's settings
     * @param ipv4Pool      the default IPv4 pool
     * @param ipv6Pool      the default IPv6 pool
     * @param ipv6Supported {@code FELIX_IPV6SUPPORT} is not false and the kernel has IPv6 (the IPv6 pool needs it)
     * @param cluster       the cluster-wide defaults
     */
    public record Settings(NodeSettings node, PoolSettings ipv4Pool, PoolSettings ipv6Pool, boolean ipv6Supported,
                           ClusterSettings cluster) {
        public Settings {
            Objects.requireNonNull(node, "node");
            Objects.requireNonNull(ipv4Pool, "ipv4Pool");
            Objects.requireNonNull(ipv6Pool, "ipv6Pool");
            Objects.requireNonNull(cluster, "cluster");
        }
    }

    /**
     * What a run did.
     *
     * @param node    the Node as stored at the end
     * @param changes every write, in order, described; empty when nothing was missing
     */
    public record Result(Node node, List<String> changes) {
    }

    private final Datastore datastore;
    private final AddressDetector detector;
    private final KubeadmConfig kubeadm;

    public NodeStartup(Datastore datastore, AddressDetector detector) {
        this(datastore, detector, KubeadmConfig.NONE);
    }

    /** @param kubeadm where unset pool CIDRs are looked up first (kubeadm's {@code podSubnet}) */
    public NodeStartup(Datastore datastore, AddressDetector detector, KubeadmConfig kubeadm) {
        this.datastore = Objects.requireNonNull(datastore, "datastore");
        this.detector = Objects.requireNonNull(detector, "detector");
        this.kubeadm = Objects.requireNonNull(kubeadm, "kubeadm");
    }

    public Result run(Settings s) {
        Changes changes = new Changes();
        Node node = new NodeResource(datastore, detector).ensure(s.node(), s.cluster().kubernetesDatastore(), changes);
        DefaultPoolCidrs cidrs = new DefaultPoolCidrs(kubeadm, () -> detector.hostAddresses(4), DefaultPools::randomUla);
        new DefaultPools(datastore, cidrs).ensure(s.ipv4Pool(), s.ipv6Pool(), s.ipv6Supported(), changes);
        new ClusterDefaults(datastore).ensure(s.cluster(), s.node().nodeName(), changes);
        node = new TunnelAddresses(datastore, new IpamClient(datastore, IpamOptions.defaults())).reconcile(node,
                s.node().wireguardHostEncryption(), changes);
        return new Result(node, changes.list());
    }

    /**
     * Only the last step, for {@code allocate-tunnel-addrs} (run again whenever pools or the Node
     * change, e.g. once felix publishes its WireGuard key): the Node must exist (start-up made it).
     */
    public Result tunnelAddresses(String nodeName, boolean wireguardHostEncryption) {
        Changes changes = new Changes();
        Node node = datastore.get(ResourceKey.of(ResourceKind.NODE, nodeName))
                .map(Node.class::cast)
                .orElseThrow(() -> new StartupException("Node " + nodeName + " does not exist: calico-node start-up makes it"));
        node = new TunnelAddresses(datastore, new IpamClient(datastore, IpamOptions.defaults())).reconcile(node,
                wireguardHostEncryption, changes);
        return new Result(node, changes.list());
    }
}
