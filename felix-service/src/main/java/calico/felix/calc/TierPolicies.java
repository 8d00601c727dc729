package calico.felix.calc;

import calico.api.model.Action;
import java.util.List;

/**
 * One tier in an endpoint's ordered list for one direction.
 *
 * <p>The dataplane evaluates {@code policies} in order, skipping staged ones; a {@code Pass}
 * jumps to the next tier. If no enforced policy decides, {@code defaultAction} applies, but
 * only when the tier holds at least one enforced policy ({@link #enforced()}): a tier that
 * selects the endpoint only through staged policies must not change real traffic.
 *
 * @param missing the Tier resource does not exist: fail closed, no policies, default Deny
 */
public record TierPolicies(String tier, Action defaultAction, List<PolicyId> policies, boolean missing) {

    public TierPolicies {
        policies = List.copyOf(policies);
    }

    /** {@return whether the dataplane enforces this tier}: it has an enforced policy, or it is missing. */
    public boolean enforced() {
        return missing || policies.stream().anyMatch(p -> !p.staged());
    }
}
