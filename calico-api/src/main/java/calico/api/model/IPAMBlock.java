package calico.api.model;

/**
 * An IPAM block: one {@code blockSize} slice of an IP pool and which of its addresses are allocated, to whom. Named by {@link IpamNames#blockName}.
 * Calico stores it as the custom resource of the same kind in {@code crd.projectcalico.org/v1}.
 */
public record IPAMBlock(ObjectMeta metadata, IPAMBlockSpec spec) implements Resource {

    @Override
    public IPAMBlock withMetadata(ObjectMeta newMetadata) {
        return new IPAMBlock(newMetadata, spec);
    }
}
