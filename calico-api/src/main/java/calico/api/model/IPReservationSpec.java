package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;

/** Spec of a {@link IPReservation}. PLACEHOLDER: fields to be completed. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record IPReservationSpec(String placeholder) {
}
