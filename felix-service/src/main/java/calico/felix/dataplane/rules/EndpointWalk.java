package calico.felix.dataplane.rules;

import calico.api.model.Action;
import calico.felix.calc.PolicyId;
import calico.felix.calc.TierPolicies;
import java.util.List;
import java.util.Set;

/**
 * The order in which one direction of an endpoint is decided, the same for every driver: each
 * enforced tier in order (staged policies skipped; a policy the model lacks fails closed; the
 * tier's end denies unless its default action is Pass, a missing tier's default is Deny), then
 * the profiles in order, then the final deny. {@link RuleRenderer#endpointChain} turns the steps
 * into netfilter rules, the eBPF driver's {@code TableCompiler} into rule-table entries; how a
 * Pass reaches the tier's end and how an accept ends the walk is each syntax's own.
 */
public interface EndpointWalk {

    /** An enforced tier begins. */
    default void tierStart(TierPolicies tier) {
    }

    /** An enforced policy the model holds. */
    void policy(PolicyId id);

    /** An enforced policy the model lacks: the driver denies here (fail closed). */
    void missingPolicy(PolicyId id);

    /** The tier's end: {@code defaultAction} is Pass (go on to the next tier) or Deny. */
    void tierEnd(TierPolicies tier, Action defaultAction);

    /** The tiers are done; {@code anyTier}: whether any was enforced. */
    default void tiersDone(boolean anyTier) {
    }

    /** A profile, in the endpoint's order. */
    default void profile(String id) {
    }

    /** Nothing accepted: the final deny. */
    default void end() {
    }

    /** {@return the default action a tier's end applies}: its own, Deny when the tier is missing or has none */
    static Action defaultAction(TierPolicies tier) {
        return tier.missing() || tier.defaultAction() == null ? Action.Deny : tier.defaultAction();
    }

    /** Walks {@code tiers} (policies judged present by {@code existing}), then {@code profiles}, calling {@code v}. */
    static void walk(List<TierPolicies> tiers, List<String> profiles, Set<PolicyId> existing, EndpointWalk v) {
        boolean anyTier = false;
        for (TierPolicies tier : tiers) {
            if (!tier.enforced()) {
                continue;
            }
            anyTier = true;
            v.tierStart(tier);
            for (PolicyId p : tier.policies()) {
                if (p.staged()) {
                    continue;
                }
                if (existing.contains(p)) {
                    v.policy(p);
                } else {
                    v.missingPolicy(p);
                }
            }
            v.tierEnd(tier, defaultAction(tier));
        }
        v.tiersDone(anyTier);
        profiles.forEach(v::profile);
        v.end();
    }
}
