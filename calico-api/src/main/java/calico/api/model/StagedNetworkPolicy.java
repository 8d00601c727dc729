package calico.api.model;

/** The {@code projectcalico.org/v3} StagedNetworkPolicy resource. */
public record StagedNetworkPolicy(ObjectMeta metadata, StagedNetworkPolicySpec spec) implements Resource {

    @Override
    public StagedNetworkPolicy withMetadata(ObjectMeta newMetadata) {
        return new StagedNetworkPolicy(newMetadata, spec);
    }
}
