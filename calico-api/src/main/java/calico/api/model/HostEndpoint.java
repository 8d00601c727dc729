package calico.api.model;

/** The {@code projectcalico.org/v3} HostEndpoint resource. */
public record HostEndpoint(ObjectMeta metadata, HostEndpointSpec spec) implements Resource {

    @Override
    public HostEndpoint withMetadata(ObjectMeta newMetadata) {
        return new HostEndpoint(newMetadata, spec);
    }
}
