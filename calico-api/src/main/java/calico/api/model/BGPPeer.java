package calico.api.model;

/** The {@code projectcalico.org/v3} BGPPeer resource. */
public record BGPPeer(ObjectMeta metadata, BGPPeerSpec spec) implements Resource {

    @Override
    public BGPPeer withMetadata(ObjectMeta newMetadata) {
        return new BGPPeer(newMetadata, spec);
    }
}
