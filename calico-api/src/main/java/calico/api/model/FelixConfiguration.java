package calico.api.model;

/** The {@code projectcalico.org/v3} FelixConfiguration resource. */
public record FelixConfiguration(ObjectMeta metadata, FelixConfigurationSpec spec) implements Resource {

    @Override
    public FelixConfiguration withMetadata(ObjectMeta newMetadata) {
        return new FelixConfiguration(newMetadata, spec);
    }
}
