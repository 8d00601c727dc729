package calico.api.model;

/** The {@code projectcalico.org/v3} GlobalNetworkSet resource. */
public record GlobalNetworkSet(ObjectMeta metadata, GlobalNetworkSetSpec spec) implements Resource {

    @Override
    public GlobalNetworkSet withMetadata(ObjectMeta newMetadata) {
        return new GlobalNetworkSet(newMetadata, spec);
    }
}
