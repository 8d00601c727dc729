package calico.api.model;

/** The {@code projectcalico.org/v3} BGPFilter resource. */
public record BGPFilter(ObjectMeta metadata, BGPFilterSpec spec) implements Resource {

    @Override
    public BGPFilter withMetadata(ObjectMeta newMetadata) {
        return new BGPFilter(newMetadata, spec);
    }
}
