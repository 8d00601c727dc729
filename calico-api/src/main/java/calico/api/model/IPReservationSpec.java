package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/** Spec of an {@link IPReservation}: CIDRs and addresses that IPAM must not hand out. */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record IPReservationSpec(@JsonProperty("reservedCIDRs") List<String> reservedCIDRs) {
    public IPReservationSpec {
        reservedCIDRs = reservedCIDRs == null ? List.of() : List.copyOf(reservedCIDRs);
    }
}
