package calico.api.model;

/** The {@code projectcalico.org/v3} GlobalNetworkPolicy resource. */
public record GlobalNetworkPolicy(ObjectMeta metadata, GlobalNetworkPolicySpec spec) implements Resource {

    @Override
    public GlobalNetworkPolicy withMetadata(ObjectMeta newMetadata) {
        return new GlobalNetworkPolicy(newMetadata, spec);
    }
}
