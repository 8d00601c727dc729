package calico.libcalico.typha;

import calico.api.model.ResourceKind;
import calico.libcalico.datastore.Datastore;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

/**
 * Which stream a typha client wants, by the names the hello carries. Each type is served by its
 * own syncer over its own kinds, as Calico's typha runs one syncer per client kind.
 */
public enum SyncerType {
    /**
     * Everything felix's calculation graph consumes: every kind but IPAM's affinities, handles and
     * configuration. IPAM blocks are in, as in Calico's felix syncer: felix routes each block to the
     * node it is affine to ({@code routeSource: CalicoIPAM}). Kubernetes Services
     * included (flow logs name the service a connection dialled), on the kubernetes datastore
     * only ({@link #kindsOn}), as Calico's felix syncer watches them in KDD mode only.
     */
    FELIX("felix", EnumSet.complementOf(EnumSet.of(ResourceKind.BLOCK_AFFINITY,
            ResourceKind.IPAM_HANDLE, ResourceKind.IPAM_CONFIGURATION))),
    /**
     * What the BGP daemon's configuration renderer consumes; block affinities too, as Calico's
     * bgp syncer watches them (with Calico IPAM) so confd can advertise each node's blocks, and
     * workload endpoints, for BGPPeers with a {@code localWorkloadSelector} (confd keeps only
     * its own node's).
     */
    BGP("bgp", EnumSet.of(ResourceKind.BGP_CONFIGURATION, ResourceKind.BGP_PEER, ResourceKind.BGP_FILTER,
            ResourceKind.NODE, ResourceKind.IP_POOL, ResourceKind.IP_RESERVATION, ResourceKind.BLOCK_AFFINITY,
            ResourceKind.WORKLOAD_ENDPOINT));

    private final String wireName;
    private final Set<ResourceKind> kinds;

    SyncerType(String wireName, Set<ResourceKind> kinds) {
        this.wireName = wireName;
        this.kinds = kinds;
    }

    /** {@return the name used in {@code ClientHello.syncer_type}} */
    public String wireName() {
        return wireName;
    }

    /** {@return the kinds this type's syncer watches (a fresh copy)} */
    public Set<ResourceKind> kinds() {
        return EnumSet.copyOf(kinds);
    }

    /** {@return the kinds this type's syncer watches on {@code store}}: those it can hold. */
    public Set<ResourceKind> kindsOn(Datastore store) {
        Set<ResourceKind> k = kinds();
        k.removeIf(kind -> !store.presents(kind));
        return k;
    }

    /** Parses a wire name; the error names the field and lists the accepted values. */
    public static SyncerType fromWire(String name) {
        String n = name == null ? "" : name.trim().toLowerCase(Locale.ROOT);
        for (SyncerType t : values()) {
            if (t.wireName.equals(n)) {
                return t;
            }
        }
        throw new IllegalArgumentException("syncer_type: \"" + name + "\" is not one of felix, bgp");
    }
}
