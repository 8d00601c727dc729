package calico.api.validation;

import calico.api.model.IPPool;
import calico.api.net.Cidr;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The check that needs the datastore: a new pool's CIDR must not overlap any other pool's.
 * The datastore calls it on create with the pools it holds; updates cannot change a CIDR.
 */
public final class IpPoolOverlap {

    private IpPoolOverlap() {
    }

    /**
     * {@return one error per existing pool whose CIDR overlaps the candidate's}, empty when the
     * candidate is free to use. A pool with the candidate's own name is skipped (that is an
     * "already exists" case for the datastore); pools or a candidate whose CIDR does not parse
     * are skipped, since validation reports those.
     */
    public static List<FieldError> check(IPPool candidate, Collection<IPPool> existing) {
        Objects.requireNonNull(candidate, "candidate");
        Optional<Cidr> mine = cidrOf(candidate);
        List<FieldError> errors = new ArrayList<>();
        if (mine.isEmpty()) {
            return errors;
        }
        String myName = candidate.metadata() == null ? null : candidate.metadata().name();
        for (IPPool other : existing) {
            String name = other.metadata() == null ? null : other.metadata().name();
            if (Objects.equals(name, myName)) {
                continue;
            }
            Optional<Cidr> theirs = cidrOf(other);
            if (theirs.isPresent() && theirs.get().overlaps(mine.get())) {
                errors.add(new FieldError("spec.cidr", "IPPool(" + myName + ") CIDR " + mine.get()
                        + " overlaps with IPPool(" + name + ") CIDR " + other.spec().cidr()));
            }
        }
        return errors;
    }

    private static Optional<Cidr> cidrOf(IPPool pool) {
        return pool.spec() == null ? Optional.empty() : Cidr.tryParse(pool.spec().cidr());
    }
}
