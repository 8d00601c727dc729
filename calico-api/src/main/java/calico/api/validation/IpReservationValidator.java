package calico.api.validation;

import calico.api.model.IPReservation;

/** Checks IP reservations: each reserved entry a CIDR or a single address. */
final class IpReservationValidator {

    private IpReservationValidator() {
    }

    static void validate(IPReservation r, Errors errors) {
        MetadataValidator.validate(r.metadata(), r.resourceKind(), true, errors);
        if (r.spec() != null) {
            Cidrs.cidrsOrIps(r.spec().reservedCIDRs(), FieldPath.of("spec").field("reservedCIDRs"), errors);
        }
    }
}
