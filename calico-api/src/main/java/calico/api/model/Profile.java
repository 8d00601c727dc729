package calico.api.model;

/** The {@code projectcalico.org/v3} Profile resource. */
public record Profile(ObjectMeta metadata, ProfileSpec spec) implements Resource {

    @Override
    public Profile withMetadata(ObjectMeta newMetadata) {
        return new Profile(newMetadata, spec);
    }
}
