package calico.api.model;

/** The {@code projectcalico.org/v3} IPReservation resource. */
public record IPReservation(ObjectMeta metadata, IPReservationSpec spec) implements Resource {

    @Override
    public IPReservation withMetadata(ObjectMeta newMetadata) {
        return new IPReservation(newMetadata, spec);
    }
}
