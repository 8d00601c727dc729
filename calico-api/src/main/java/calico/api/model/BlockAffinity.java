package calico.api.model;

/**
 * A node's claim on an IPAM block ({@code pending} while it is being claimed, {@code confirmed} once the block is written). Named by {@link IpamNames#affinityName}.
 * Calico stores it as the custom resource of the same kind in {@code crd.projectcalico.org/v1}.
 */
public record BlockAffinity(ObjectMeta metadata, BlockAffinitySpec spec) implements Resource {

    @Override
    public BlockAffinity withMetadata(ObjectMeta newMetadata) {
        return new BlockAffinity(newMetadata, spec);
    }

    /** {@return this affinity in another state}; metadata (and so the resourceVersion) kept. */
    public BlockAffinity withSpecState(String state) {
        return new BlockAffinity(metadata, spec.withState(state));
    }
}
