package calico.api.model;

/** The {@code projectcalico.org/v3} Node resource. */
public record Node(ObjectMeta metadata, NodeSpec spec) implements Resource {

    @Override
    public Node withMetadata(ObjectMeta newMetadata) {
        return new Node(newMetadata, spec);
    }
}
