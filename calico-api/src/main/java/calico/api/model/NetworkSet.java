package calico.api.model;

/** The {@code projectcalico.org/v3} NetworkSet resource. */
public record NetworkSet(ObjectMeta metadata, NetworkSetSpec spec) implements Resource {

    @Override
    public NetworkSet withMetadata(ObjectMeta newMetadata) {
        return new NetworkSet(newMetadata, spec);
    }
}
