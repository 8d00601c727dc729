package calico.api.model;

/** The {@code projectcalico.org/v3} ClusterInformation resource. */
public record ClusterInformation(ObjectMeta metadata, ClusterInformationSpec spec) implements Resource {

    @Override
    public ClusterInformation withMetadata(ObjectMeta newMetadata) {
        return new ClusterInformation(newMetadata, spec);
    }
}
