package calico.api.model;

/** The {@code projectcalico.org/v3} Tier resource. */
public record Tier(ObjectMeta metadata, TierSpec spec) implements Resource {

    @Override
    public Tier withMetadata(ObjectMeta newMetadata) {
        return new Tier(newMetadata, spec);
    }
}
