package calico.api.model;

/** The {@code projectcalico.org/v3} IPPool resource. */
public record IPPool(ObjectMeta metadata, IPPoolSpec spec) implements Resource {

    @Override
    public IPPool withMetadata(ObjectMeta newMetadata) {
        return new IPPool(newMetadata, spec);
    }
}
