package calico.api.model;

/** The {@code projectcalico.org/v3} WorkloadEndpoint resource. */
public record WorkloadEndpoint(ObjectMeta metadata, WorkloadEndpointSpec spec) implements Resource {

    @Override
    public WorkloadEndpoint withMetadata(ObjectMeta newMetadata) {
        return new WorkloadEndpoint(newMetadata, spec);
    }
}
