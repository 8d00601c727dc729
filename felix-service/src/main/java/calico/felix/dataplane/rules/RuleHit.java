package calico.felix.dataplane.rules;

import calico.felix.calc.PolicyId;
import calico.felix.dataplane.rules.NflogPrefix.Verdict;

/**
 * What one NFLOG prefix stands for.
 *
 * @param policy    the policy of a {@link Owner#POLICY_RULE} or {@link Owner#MISSING_POLICY} hit
 * @param profile   the profile of a {@link Owner#PROFILE_RULE} hit
 * @param tier      the tier of a policy or end-of-tier hit; null for profiles
 * @param ruleIndex the rule's index in its policy or profile direction; -1 when no rule
 */
public record RuleHit(Verdict verdict, boolean inbound, Owner owner, PolicyId policy, String profile, String tier,
                      int ruleIndex) {

    /** What rendered the NFLOG rule. */
    public enum Owner { POLICY_RULE, PROFILE_RULE, END_OF_TIER, NO_PROFILE, MISSING_POLICY }

    /** {@return whether this hit decides the packet's fate} (a Pass hands over to the next tier) */
    public boolean terminal() {
        return verdict != Verdict.PASS;
    }
}
