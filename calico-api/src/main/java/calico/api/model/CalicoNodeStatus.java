package calico.api.model;

/**
 * The {@code projectcalico.org/v3} CalicoNodeStatus resource: a request, for one node, to report
 * the state of its BGP daemon, sessions and routes every {@code updatePeriodSeconds}. The user
 * writes the spec; calico-node writes the status (through the status subresource on the
 * kubernetes datastore).
 */
public record CalicoNodeStatus(ObjectMeta metadata, CalicoNodeStatusSpec spec, CalicoNodeStatusStatus status)
        implements Resource {

    /** A request without status, as users create it. */
    public CalicoNodeStatus(ObjectMeta metadata, CalicoNodeStatusSpec spec) {
        this(metadata, spec, null);
    }

    @Override
    public CalicoNodeStatus withMetadata(ObjectMeta newMetadata) {
        return new CalicoNodeStatus(newMetadata, spec, status);
    }

    public CalicoNodeStatus withStatus(CalicoNodeStatusStatus newStatus) {
        return new CalicoNodeStatus(metadata, spec, newStatus);
    }
}
