package calico.api.model;

/** The {@code projectcalico.org/v3} BGPConfiguration resource. */
public record BGPConfiguration(ObjectMeta metadata, BGPConfigurationSpec spec) implements Resource {

    @Override
    public BGPConfiguration withMetadata(ObjectMeta newMetadata) {
        return new BGPConfiguration(newMetadata, spec);
    }
}
