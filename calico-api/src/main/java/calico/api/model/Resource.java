package calico.api.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

/**
 * A {@code projectcalico.org/v3} resource: metadata plus a kind-specific spec.
 *
 * <p>{@code apiVersion} and {@code kind} are derived from the Java type, written on output
 * and checked (not stored) on input by {@link calico.api.codec.ResourceCodec}. Absent parts
 * (a missing {@code spec} or {@code status}) are left out of the output, never written as null.
 */
@JsonPropertyOrder({"apiVersion", "kind", "metadata", "spec", "status"})
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(value = {"apiVersion", "kind"}, allowGetters = true)
public sealed interface Resource permits
        GlobalNetworkPolicy, NetworkPolicy, StagedGlobalNetworkPolicy, StagedNetworkPolicy,
        StagedKubernetesNetworkPolicy, Tier, Profile, GlobalNetworkSet, NetworkSet,
        WorkloadEndpoint, HostEndpoint, IPPool, IPReservation, BGPConfiguration, BGPPeer,
        BGPFilter, Node, FelixConfiguration, ClusterInformation, KubeControllersConfiguration, CalicoNodeStatus,
        IPAMBlock, BlockAffinity, IPAMHandle, IPAMConfiguration, KubernetesService,
        KubernetesEndpointSlice {

    String API_GROUP = "projectcalico.org";
    String API_VERSION = "projectcalico.org/v3";

    ObjectMeta metadata();

    /** {@return a copy of this resource with other metadata}; the spec is shared. */
    Resource withMetadata(ObjectMeta metadata);

    @JsonProperty("apiVersion")
    default String apiVersion() {
        return API_VERSION;
    }

    @JsonProperty("kind")
    default String kind() {
        return ResourceKind.of(getClass()).kind();
    }

    /** {@return the kind descriptor of this resource}. */
    default ResourceKind resourceKind() {
        return ResourceKind.of(getClass());
    }

    /** {@return the resource's key: kind, namespace (or null) and name}. */
    default ResourceKey key() {
        return new ResourceKey(resourceKind(), metadata().namespace(), metadata().name());
    }
}
