package calico.api.validation;

import calico.api.model.Action;
import calico.api.model.Tier;
import calico.api.model.TierSpec;
import java.util.Map;

/**
 * Defaults and checks tiers. Tier names are single DNS labels because they prefix policy
 * names. The built-in tiers have fixed orders and default actions, as Calico enforces.
 */
final class TierValidator {

    static final double DEFAULT_ORDER = 1_000_000;
    static final double KUBE_ADMIN_ORDER = 1_000;
    static final double KUBE_BASELINE_ORDER = 10_000_000;

    /** Built-in tier name to its required order and default action. */
    private static final Map<String, Fixed> BUILT_IN = Map.of(
            "default", new Fixed(DEFAULT_ORDER, Action.Deny),
            "kube-admin", new Fixed(KUBE_ADMIN_ORDER, Action.Pass),
            "kube-baseline", new Fixed(KUBE_BASELINE_ORDER, Action.Pass));

    private static final FieldPath SPEC = FieldPath.of("spec");

    private record Fixed(double order, Action defaultAction) {
    }

    private TierValidator() {
    }

    /**
     * Calico treats an absent order as 1,000,000 (the default tier's order) and an absent
     * default action as Deny.
     */
    static TierSpec defaults(TierSpec spec) {
        Double order = spec == null || spec.order() == null ? DEFAULT_ORDER : spec.order();
        Action action = spec == null || spec.defaultAction() == null ? Action.Deny : spec.defaultAction();
        return new TierSpec(order, action);
    }

    static void validate(Tier tier, Errors errors) {
        MetadataValidator.validate(tier.metadata(), tier.resourceKind(), false, errors);
        String name = tier.metadata() == null ? null : tier.metadata().name();
        if (name != null && !name.isEmpty()) {
            String bad = Names.dnsLabel(name);
            if (bad != null) {
                errors.add(FieldPath.of("metadata").field("name"), bad + " (tier names cannot contain '.')");
            }
        }
        TierSpec s = tier.spec();
        if (s.order().isNaN() || s.order().isInfinite()) {
            errors.add(SPEC.field("order"), "must be a finite number");
        }
        if (s.defaultAction() != Action.Deny && s.defaultAction() != Action.Pass) {
            errors.add(SPEC.field("defaultAction"), "must be Deny or Pass");
        }
        Fixed fixed = name == null ? null : BUILT_IN.get(name);
        if (fixed != null) {
            if (s.order() != fixed.order()) {
                errors.add(SPEC.field("order"), "the " + name + " tier's order must be " + (long) fixed.order());
            }
            if (s.defaultAction() != fixed.defaultAction()) {
                errors.add(SPEC.field("defaultAction"), "the " + name + " tier's defaultAction must be "
                        + fixed.defaultAction());
            }
        }
    }
}
