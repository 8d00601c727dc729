package calico.api.model;

/** The {@code projectcalico.org/v3} NetworkPolicy resource. */
public record NetworkPolicy(ObjectMeta metadata, NetworkPolicySpec spec) implements Resource {

    @Override
    public NetworkPolicy withMetadata(ObjectMeta newMetadata) {
        return new NetworkPolicy(newMetadata, spec);
    }
}
