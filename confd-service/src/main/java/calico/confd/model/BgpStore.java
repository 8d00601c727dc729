package calico.confd.model;

import calico.api.model.BGPConfiguration;
import calico.api.model.BGPFilter;
import calico.api.model.BGPPeer;
import calico.api.model.BlockAffinity;
import calico.api.model.IPPool;
import calico.api.model.Node;
import calico.api.model.Resource;
import calico.api.model.ResourceKind;
import calico.api.model.WorkloadEndpoint;
import calico.libcalico.syncer.Update;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

/**
 * The syncer's current state of the kinds confd renders from. Not thread-safe: the syncer calls
 * {@link #apply} from its one dispatch thread; readers take a {@link #view()} copy.
 */
public final class BgpStore {

    /**
     * The kinds confd watches: typha's {@code bgp} syncer kinds (BGP resources, nodes, pools, block
     * affinities and workload endpoints, the last for {@code localWorkloadSelector} peers).
     */
    public static final Set<ResourceKind> KINDS = EnumSet.of(ResourceKind.BGP_CONFIGURATION, ResourceKind.BGP_PEER,
            ResourceKind.BGP_FILTER, ResourceKind.NODE, ResourceKind.IP_POOL, ResourceKind.BLOCK_AFFINITY,
            ResourceKind.WORKLOAD_ENDPOINT);

    private final TreeMap<String, Node> nodes = new TreeMap<>();
    private final TreeMap<String, BGPPeer> peers = new TreeMap<>();
    private final TreeMap<String, BGPFilter> filters = new TreeMap<>();
    private final TreeMap<String, BGPConfiguration> configs = new TreeMap<>();
    private final TreeMap<String, IPPool> pools = new TreeMap<>();
    private final TreeMap<String, BlockAffinity> affinities = new TreeMap<>();
    private final TreeMap<String, WorkloadEndpoint> workloads = new TreeMap<>();
    private final String localNode;
    private TreeMap<String, ServiceInfo> services = new TreeMap<>();

    /** A store that keeps every workload endpoint (tests rendering for several nodes). */
    public BgpStore() {
        this(null);
    }

    /**
     * @param localNode only this node's workload endpoints are kept (they are all the renderer
     *                  uses), so other nodes' pods never trigger a render; {@code null} keeps all
     */
    public BgpStore(String localNode) {
        this.localNode = localNode;
    }

    /** Applies a batch; {@return whether anything confd renders from changed} */
    public boolean apply(List<Update> updates) {
        boolean changed = false;
        for (Update u : updates) {
            changed |= u.key().kind() == ResourceKind.WORKLOAD_ENDPOINT
                    ? workload(u.key().namespace() + "/" + u.key().name(), (WorkloadEndpoint) u.value())
                    : apply(u.key().kind(), u.key().name(), u.value());
        }
        return changed;
    }

    private boolean apply(ResourceKind kind, String name, Resource value) {
        return switch (kind) {
            case NODE -> put(nodes, name, (Node) value);
            case BGP_PEER -> put(peers, name, (BGPPeer) value);
            case BGP_FILTER -> put(filters, name, (BGPFilter) value);
            case BGP_CONFIGURATION -> put(configs, name, (BGPConfiguration) value);
            case IP_POOL -> put(pools, name, (IPPool) value);
            case BLOCK_AFFINITY -> put(affinities, name, (BlockAffinity) value);
            default -> false;
        };
    }

    private boolean workload(String key, WorkloadEndpoint value) {
        boolean local = value != null && value.spec() != null
                && (localNode == null || localNode.equals(value.spec().node()));
        // An endpoint that moved off this node (or was never on it) is as good as deleted.
        return put(workloads, key, local ? value : null);
    }

    private static <T extends Resource> boolean put(TreeMap<String, T> map, String name, T value) {
        T old = value == null ? map.remove(name) : map.put(name, value);
        // The resourceVersion changes on every write; compare what is rendered from.
        return old == null ? value != null : value == null || !strip(old).equals(strip(value));
    }

    private static Resource strip(Resource r) {
        return r.withMetadata(r.metadata().withResourceVersion(null));
    }

    /** Replaces the Kubernetes Services (from their own watch); {@return whether anything changed} */
    public boolean setServices(java.util.Map<String, ServiceInfo> all) {
        TreeMap<String, ServiceInfo> next = new TreeMap<>(all);
        boolean changed = !next.equals(services);
        services = next;
        return changed;
    }

    public BgpView view() {
        return new BgpView(nodes, peers, filters, configs, pools, affinities, workloads, services);
    }
}
