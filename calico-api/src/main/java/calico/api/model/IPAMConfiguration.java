package calico.api.model;

/**
 * Cluster-wide IPAM settings; the one instance is named {@code default}.
 * Calico stores it as the custom resource of the same kind in {@code crd.projectcalico.org/v1}.
 */
public record IPAMConfiguration(ObjectMeta metadata, IPAMConfigurationSpec spec) implements Resource {

    @Override
    public IPAMConfiguration withMetadata(ObjectMeta newMetadata) {
        return new IPAMConfiguration(newMetadata, spec);
    }
}
