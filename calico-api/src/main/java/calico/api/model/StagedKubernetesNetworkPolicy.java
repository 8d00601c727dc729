package calico.api.model;

/** The {@code projectcalico.org/v3} StagedKubernetesNetworkPolicy resource. */
public record StagedKubernetesNetworkPolicy(ObjectMeta metadata, StagedKubernetesNetworkPolicySpec spec) implements Resource {

    @Override
    public StagedKubernetesNetworkPolicy withMetadata(ObjectMeta newMetadata) {
        return new StagedKubernetesNetworkPolicy(newMetadata, spec);
    }
}
