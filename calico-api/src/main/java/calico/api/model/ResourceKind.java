package calico.api.model;

import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;

/** Every {@code projectcalico.org/v3} kind: its name, plural, scope and Java type. */
public enum ResourceKind {
    GLOBAL_NETWORK_POLICY("GlobalNetworkPolicy", "globalnetworkpolicies", false, GlobalNetworkPolicy.class),
    NETWORK_POLICY("NetworkPolicy", "networkpolicies", true, NetworkPolicy.class),
    STAGED_GLOBAL_NETWORK_POLICY("StagedGlobalNetworkPolicy", "stagedglobalnetworkpolicies", false,
            StagedGlobalNetworkPolicy.class),
    STAGED_NETWORK_POLICY("StagedNetworkPolicy", "stagednetworkpolicies", true, StagedNetworkPolicy.class),
    STAGED_KUBERNETES_NETWORK_POLICY("StagedKubernetesNetworkPolicy", "stagedkubernetesnetworkpolicies", true,
            StagedKubernetesNetworkPolicy.class),
    TIER("Tier", "tiers", false, Tier.class),
    PROFILE("Profile", "profiles", false, Profile.class),
    GLOBAL_NETWORK_SET("GlobalNetworkSet", "globalnetworksets", false, GlobalNetworkSet.class),
    NETWORK_SET("NetworkSet", "networksets", true, NetworkSet.class),
    WORKLOAD_ENDPOINT("WorkloadEndpoint", "workloadendpoints", true, WorkloadEndpoint.class),
    HOST_ENDPOINT("HostEndpoint", "hostendpoints", false, HostEndpoint.class),
    IP_POOL("IPPool", "ippools", false, IPPool.class),
    IP_RESERVATION("IPReservation", "ipreservations", false, IPReservation.class),
    BGP_CONFIGURATION("BGPConfiguration", "bgpconfigurations", false, BGPConfiguration.class),
    BGP_PEER("BGPPeer", "bgppeers", false, BGPPeer.class),
    BGP_FILTER("BGPFilter", "bgpfilters", false, BGPFilter.class),
    NODE("Node", "nodes", false, Node.class),
    FELIX_CONFIGURATION("FelixConfiguration", "felixconfigurations", false, FelixConfiguration.class),
    CLUSTER_INFORMATION("ClusterInformation", "clusterinformations", false, ClusterInformation.class),
    KUBE_CONTROLLERS_CONFIGURATION("KubeControllersConfiguration", "kubecontrollersconfigurations", false,
            KubeControllersConfiguration.class),
    CALICO_NODE_STATUS("CalicoNodeStatus", "caliconodestatuses", false, CalicoNodeStatus.class),
    // IPAM state (libcalico-go's IPAM kinds, stored as Calico's ipamblocks/blockaffinities/ipamhandles/ipamconfigs CRDs).
    IPAM_BLOCK("IPAMBlock", "ipamblocks", false, IPAMBlock.class),
    BLOCK_AFFINITY("BlockAffinity", "blockaffinities", false, BlockAffinity.class),
    IPAM_HANDLE("IPAMHandle", "ipamhandles", false, IPAMHandle.class),
    IPAM_CONFIGURATION("IPAMConfiguration", "ipamconfigs", false, IPAMConfiguration.class),
    // Not a v3 kind: libcalico-go's model kind for a Kubernetes Service, presented by the kubernetes datastore only.
    KUBERNETES_SERVICE("KubernetesService", "kubernetesservices", true, KubernetesService.class),
    // Not a v3 kind: libcalico-go's model kind for a Kubernetes EndpointSlice (felix's services matches), kubernetes datastore only.
    KUBERNETES_ENDPOINT_SLICE("KubernetesEndpointSlice", "kubernetesendpointslices", true, KubernetesEndpointSlice.class);

    private static final Map<String, ResourceKind> BY_KIND =
            Arrays.stream(values()).collect(Collectors.toUnmodifiableMap(ResourceKind::kind, Function.identity()));
    private static final Map<String, ResourceKind> BY_PLURAL =
            Arrays.stream(values()).collect(Collectors.toUnmodifiableMap(ResourceKind::plural, Function.identity()));
    private static final Map<Class<?>, ResourceKind> BY_TYPE =
            Arrays.stream(values()).collect(Collectors.toUnmodifiableMap(ResourceKind::type, Function.identity()));

    private final String kind;
    private final String plural;
    private final boolean namespaced;
    private final Class<? extends Resource> type;

    ResourceKind(String kind, String plural, boolean namespaced, Class<? extends Resource> type) {
        this.kind = kind;
        this.plural = plural;
        this.namespaced = namespaced;
        this.type = type;
    }

    /** {@return the kind as written in YAML, e.g. {@code GlobalNetworkPolicy}}. */
    public String kind() {
        return kind;
    }

    /** {@return the {@code *List} kind, e.g. {@code GlobalNetworkPolicyList}}. */
    public String listKind() {
        return kind + "List";
    }

    /** {@return the lowercase plural used in etcd keys and API paths}. */
    public String plural() {
        return plural;
    }

    public boolean namespaced() {
        return namespaced;
    }

    public Class<? extends Resource> type() {
        return type;
    }

    /**
     * {@return whether only the kubernetes datastore presents this kind}, read-only, from
     * Kubernetes' own objects: no backend stores it, Calico's API server does not serve it, and on
     * any other datastore it is always empty (as Calico's felix syncer watches Services and
     * EndpointSlices only in KDD mode).
     */
    public boolean kubernetesOnly() {
        return this == KUBERNETES_SERVICE || this == KUBERNETES_ENDPOINT_SLICE;
    }

    /**
     * {@return whether the kind's status is written apart from its spec}: on the kubernetes datastore
     * through the custom resource's {@code status} subresource (an update of the object leaves the
     * status as it was, a status update leaves the spec), elsewhere by a plain update. Only
     * CalicoNodeStatus, whose spec is the user's and whose status is calico-node's.
     */
    public boolean statusSubresource() {
        return this == CALICO_NODE_STATUS;
    }

    public static Optional<ResourceKind> byKind(String kind) {
        return Optional.ofNullable(BY_KIND.get(kind));
    }

    public static Optional<ResourceKind> byPlural(String plural) {
        return Optional.ofNullable(BY_PLURAL.get(plural));
    }

    /** {@return the kind of a resource class}; every permitted subtype of {@link Resource} has one. */
    public static ResourceKind of(Class<?> type) {
        ResourceKind k = BY_TYPE.get(type);
        if (k == null) {
            throw new IllegalArgumentException("not a projectcalico.org/v3 resource type: " + type.getName());
        }
        return k;
    }
}
