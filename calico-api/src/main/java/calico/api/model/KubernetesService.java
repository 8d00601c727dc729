package calico.api.model;

/**
 * A Kubernetes Service as felix needs it to name the service a connection was addressed to
 * (libcalico-go's model kind {@code KubernetesService}): not a {@code projectcalico.org/v3} kind
 * and never stored by Calico. Only the kubernetes datastore presents it, read-only, from the
 * cluster's {@code v1} Services ({@link ResourceKind#kubernetesOnly()}).
 */
public record KubernetesService(ObjectMeta metadata, KubernetesServiceSpec spec) implements Resource {

    @Override
    public KubernetesService withMetadata(ObjectMeta newMetadata) {
        return new KubernetesService(newMetadata, spec);
    }
}
