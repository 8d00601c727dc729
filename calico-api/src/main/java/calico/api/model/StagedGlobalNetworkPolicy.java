package calico.api.model;

/** The {@code projectcalico.org/v3} StagedGlobalNetworkPolicy resource. */
public record StagedGlobalNetworkPolicy(ObjectMeta metadata, StagedGlobalNetworkPolicySpec spec) implements Resource {

    @Override
    public StagedGlobalNetworkPolicy withMetadata(ObjectMeta newMetadata) {
        return new StagedGlobalNetworkPolicy(newMetadata, spec);
    }
}
