package calico.api.model;

/**
 * A Kubernetes EndpointSlice ({@code discovery.k8s.io/v1}) as felix needs it to resolve a rule's
 * {@code services} match into the service's endpoints (libcalico-go's model kind
 * {@code KubernetesEndpointSlice}): not a {@code projectcalico.org/v3} kind and never stored by
 * Calico. Only the kubernetes datastore presents it, read-only, from the cluster's EndpointSlices
 * ({@link ResourceKind#kubernetesOnly()}).
 */
public record KubernetesEndpointSlice(ObjectMeta metadata, KubernetesEndpointSliceSpec spec) implements Resource {

    @Override
    public KubernetesEndpointSlice withMetadata(ObjectMeta newMetadata) {
        return new KubernetesEndpointSlice(newMetadata, spec);
    }
}
