package calico.api.model;

/**
 * The {@code projectcalico.org/v3} Node resource: one host running Calico. {@code status} is
 * written by Calico components (WireGuard keys, pod CIDRs), never by users.
 */
public record Node(ObjectMeta metadata, NodeSpec spec, NodeStatus status) implements Resource {

    /** A node without status, as users create it. */
    public Node(ObjectMeta metadata, NodeSpec spec) {
        this(metadata, spec, null);
    }

    @Override
    public Node withMetadata(ObjectMeta newMetadata) {
        return new Node(newMetadata, spec, status);
    }

    public Node withStatus(NodeStatus newStatus) {
        return new Node(metadata, spec, newStatus);
    }
}
