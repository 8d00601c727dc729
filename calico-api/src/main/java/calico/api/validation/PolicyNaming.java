package calico.api.validation;

/** How a Calico policy's name must relate to its tier; Calico changed this rule over time. */
public enum PolicyNaming {

    /**
     * Calico v3.29.4 to v3.30 (libcalico-go {@code names.ValidateTieredPolicyName}): in tier
     * {@code default} a policy is named {@code name} or {@code default.name}; in any other tier
     * {@code T} it must be named {@code T.name}. A dotted name whose first part is not the
     * policy's tier is rejected.
     */
    TIER_PREFIXED,

    /**
     * Calico after projectcalico/calico PR #11232 (October 2025): the tier is no longer part of
     * the policy's identity and no prefix is required; only the name format is checked.
     */
    UNPREFIXED_ALLOWED
}
