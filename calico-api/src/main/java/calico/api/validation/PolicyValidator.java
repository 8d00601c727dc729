package calico.api.validation;

import calico.api.model.EntityRule;
import calico.api.model.GlobalNetworkPolicy;
import calico.api.model.GlobalNetworkPolicySpec;
import calico.api.model.NetworkPolicy;
import calico.api.model.NetworkPolicySpec;
import calico.api.model.ObjectMeta;
import calico.api.model.PolicyType;
import calico.api.model.Rule;
import calico.api.model.StagedAction;
import calico.api.model.StagedGlobalNetworkPolicy;
import calico.api.model.StagedGlobalNetworkPolicySpec;
import calico.api.model.StagedNetworkPolicy;
import calico.api.model.StagedNetworkPolicySpec;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Defaults and checks (global) network policies: name versus tier, selectors, types, the
 * direction-dependent rule checks, and the doNotTrack / preDNAT / applyOnForward combination.
 * Whether the tier exists is the datastore's check, not this one.
 */
final class PolicyValidator {

    /** The only performance hint Calico defines. */
    static final String ASSUME_NEEDED_ON_EVERY_NODE = "AssumeNeededOnEveryNode";

    private static final FieldPath SPEC = FieldPath.of("spec");

    private PolicyValidator() {
    }

    /** The fields global and namespaced policies share, so one set of checks serves both. */
    record Common(String tier, Double order, List<Rule> ingress, List<Rule> egress, String selector,
                  List<PolicyType> types, String serviceAccountSelector, List<String> performanceHints) {
    }

    // ---- defaulting ------------------------------------------------------------------

    /** {@return the tier, or {@code default} when unset} */
    static String defaultTier(String tier) {
        return tier == null || tier.isEmpty() ? PolicyNames.DEFAULT_TIER : tier;
    }

    /**
     * Calico's rule for an absent {@code types}: no egress rules means [Ingress] (even with no
     * rules at all), egress rules only means [Egress], both means [Ingress, Egress].
     */
    static List<PolicyType> defaultTypes(List<PolicyType> types, List<Rule> ingress, List<Rule> egress) {
        if (types != null && !types.isEmpty()) {
            return types;
        }
        if (egress.isEmpty()) {
            return List.of(PolicyType.Ingress);
        }
        if (ingress.isEmpty()) {
            return List.of(PolicyType.Egress);
        }
        return List.of(PolicyType.Ingress, PolicyType.Egress);
    }

    static GlobalNetworkPolicySpec defaults(GlobalNetworkPolicySpec s) {
        GlobalNetworkPolicySpec spec = s != null ? s
                : new GlobalNetworkPolicySpec(null, null, null, null, null, null, null, null, null, null, null, null);
        return new GlobalNetworkPolicySpec(defaultTier(spec.tier()), spec.order(), spec.ingress(), spec.egress(),
                spec.selector(), defaultTypes(spec.types(), spec.ingress(), spec.egress()), spec.doNotTrack(),
                spec.preDNAT(), spec.applyOnForward(), spec.serviceAccountSelector(), spec.namespaceSelector(),
                spec.performanceHints());
    }

    static NetworkPolicySpec defaults(NetworkPolicySpec s) {
        NetworkPolicySpec spec = s != null ? s : new NetworkPolicySpec(null, null, null, null, null, null, null, null);
        return new NetworkPolicySpec(defaultTier(spec.tier()), spec.order(), spec.ingress(), spec.egress(),
                spec.selector(), defaultTypes(spec.types(), spec.ingress(), spec.egress()),
                spec.serviceAccountSelector(), spec.performanceHints());
    }

    /** Staged policies default like enforced ones, except that a Delete stages no types. */
    static StagedGlobalNetworkPolicySpec defaults(StagedGlobalNetworkPolicySpec s) {
        StagedGlobalNetworkPolicySpec spec = s != null ? s : new StagedGlobalNetworkPolicySpec(null, null, null, null,
                null, null, null, null, null, null, null, null, null);
        if (spec.stagedAction() == StagedAction.Delete) {
            return new StagedGlobalNetworkPolicySpec(spec.stagedAction(), defaultTier(spec.tier()), spec.order(),
                    spec.ingress(), spec.egress(), spec.selector(), spec.types(), spec.doNotTrack(), spec.preDNAT(),
                    spec.applyOnForward(), spec.serviceAccountSelector(), spec.namespaceSelector(),
                    spec.performanceHints());
        }
        return StagedGlobalNetworkPolicySpec.of(spec.stagedAction(), defaults(spec.toEnforced()));
    }

    static StagedNetworkPolicySpec defaults(StagedNetworkPolicySpec s) {
        StagedNetworkPolicySpec spec = s != null ? s
                : new StagedNetworkPolicySpec(null, null, null, null, null, null, null, null, null);
        if (spec.stagedAction() == StagedAction.Delete) {
            return new StagedNetworkPolicySpec(spec.stagedAction(), defaultTier(spec.tier()), spec.order(),
                    spec.ingress(), spec.egress(), spec.selector(), spec.types(), spec.serviceAccountSelector(),
                    spec.performanceHints());
        }
        return StagedNetworkPolicySpec.of(spec.stagedAction(), defaults(spec.toEnforced()));
    }

    // ---- validation ------------------------------------------------------------------

    static void validate(GlobalNetworkPolicy p, ValidationOptions options, Errors errors) {
        MetadataValidator.validate(p.metadata(), p.resourceKind(), true, errors);
        name(p.metadata(), p.spec().tier(), false, options, errors);
        globalSpec(p.spec(), errors);
    }

    static void validate(StagedGlobalNetworkPolicy p, ValidationOptions options, Errors errors) {
        MetadataValidator.validate(p.metadata(), p.resourceKind(), true, errors);
        StagedGlobalNetworkPolicySpec s = p.spec();
        name(p.metadata(), s.tier(), false, options, errors);
        if (s.stagedAction() == StagedAction.Delete) {
            GlobalNetworkPolicySpec rest = s.toEnforced();
            stagedDelete(rest.equals(new GlobalNetworkPolicySpec(rest.tier(), null, null, null, null, null, null, null,
                    null, null, null, null)), s.tier(), errors);
            return;
        }
        globalSpec(s.toEnforced(), errors);
    }

    private static void globalSpec(GlobalNetworkPolicySpec s, Errors errors) {
        Common c = new Common(s.tier(), s.order(), s.ingress(), s.egress(), s.selector(), s.types(),
                s.serviceAccountSelector(), s.performanceHints());
        common(c, true, errors);
        Selectors.checkNoGlobal(s.namespaceSelector(), SPEC.field("namespaceSelector"), errors);
        boolean doNotTrack = Boolean.TRUE.equals(s.doNotTrack());
        boolean preDNAT = Boolean.TRUE.equals(s.preDNAT());
        if (doNotTrack && preDNAT) {
            errors.add(SPEC.field("preDNAT"), "preDNAT and doNotTrack cannot both be true");
        }
        if (preDNAT && !s.egress().isEmpty()) {
            errors.add(SPEC.field("egress"), "a preDNAT policy cannot have egress rules");
        }
        if (preDNAT && s.types().contains(PolicyType.Egress)) {
            errors.add(SPEC.field("types"), "a preDNAT policy cannot have type Egress");
        }
        if ((doNotTrack || preDNAT) && !Boolean.TRUE.equals(s.applyOnForward())) {
            errors.add(SPEC.field("applyOnForward"), "must be true when preDNAT or doNotTrack is true");
        }
    }

    private static void name(ObjectMeta meta, String tier, boolean namespaced,
                             ValidationOptions options, Errors errors) {
        if (meta != null) {
            PolicyNames.check(meta.name(), tier, namespaced, options, FieldPath.of("metadata").field("name"), errors);
        }
    }

    static void validate(NetworkPolicy p, ValidationOptions options, Errors errors) {
        MetadataValidator.validate(p.metadata(), p.resourceKind(), true, errors);
        name(p.metadata(), p.spec().tier(), true, options, errors);
        namespacedSpec(p.spec(), errors);
    }

    static void validate(StagedNetworkPolicy p, ValidationOptions options, Errors errors) {
        MetadataValidator.validate(p.metadata(), p.resourceKind(), true, errors);
        StagedNetworkPolicySpec s = p.spec();
        name(p.metadata(), s.tier(), true, options, errors);
        if (s.stagedAction() == StagedAction.Delete) {
            NetworkPolicySpec rest = s.toEnforced();
            stagedDelete(rest.equals(new NetworkPolicySpec(rest.tier(), null, null, null, null, null, null, null)),
                    s.tier(), errors);
            return;
        }
        namespacedSpec(s.toEnforced(), errors);
    }

    /** A staged Delete names the policy to remove: only its tier may be given besides the action. */
    private static void stagedDelete(boolean onlyTier, String tier, Errors errors) {
        if (!onlyTier) {
            errors.add(SPEC, "only tier may be set when stagedAction is Delete");
        }
        String badTier = Names.dnsLabel(tier);
        if (badTier != null) {
            errors.add(SPEC.field("tier"), badTier);
        }
    }

    private static void namespacedSpec(NetworkPolicySpec s, Errors errors) {
        common(new Common(s.tier(), s.order(), s.ingress(), s.egress(), s.selector(), s.types(),
                s.serviceAccountSelector(), s.performanceHints()), false, errors);
    }

    /**
     * Checks shared by every policy kind.
     *
     * @param global whether service matches need an explicit namespace (true for global
     *               policies, where there is no policy namespace to default to)
     */
    static void common(Common c, boolean global, Errors errors) {
        String badTier = Names.dnsLabel(c.tier());
        if (badTier != null) {
            errors.add(SPEC.field("tier"), badTier);
        }
        if (c.order() != null && (c.order().isNaN() || c.order().isInfinite())) {
            errors.add(SPEC.field("order"), "must be a finite number");
        }
        Selectors.checkNoGlobal(c.selector(), SPEC.field("selector"), errors);
        Selectors.checkNoGlobal(c.serviceAccountSelector(), SPEC.field("serviceAccountSelector"), errors);
        Set<PolicyType> seen = EnumSet.noneOf(PolicyType.class);
        for (int i = 0; i < c.types().size(); i++) {
            PolicyType t = c.types().get(i);
            if (t == null) {
                errors.add(SPEC.field("types").index(i), "must be Ingress or Egress");
            } else if (!seen.add(t)) {
                errors.add(SPEC.field("types").index(i), t + " is listed more than once");
            }
        }
        for (int i = 0; i < c.ingress().size(); i++) {
            rule(c.ingress().get(i), SPEC.field("ingress").index(i), true, global, errors);
        }
        for (int i = 0; i < c.egress().size(); i++) {
            rule(c.egress().get(i), SPEC.field("egress").index(i), false, global, errors);
        }
        Set<String> hints = new HashSet<>();
        for (int i = 0; i < c.performanceHints().size(); i++) {
            String h = c.performanceHints().get(i);
            FieldPath hp = SPEC.field("performanceHints").index(i);
            if (!ASSUME_NEEDED_ON_EVERY_NODE.equals(h)) {
                errors.add(hp, "unknown performance hint \"" + h + "\": the only hint is " + ASSUME_NEEDED_ON_EVERY_NODE);
            } else if (!hints.add(h)) {
                errors.add(hp, "duplicate performance hint");
            }
        }
    }

    /** One rule plus the checks that depend on its direction. */
    private static void rule(Rule r, FieldPath path, boolean ingress, boolean global, Errors errors) {
        RuleValidator.validate(r, path, errors);
        if (r == null) {
            return;
        }
        // Services name the far end of a connection: the source of ingress, the destination of egress.
        EntityRule near = ingress ? r.destination() : r.source();
        EntityRule far = ingress ? r.source() : r.destination();
        String nearSide = ingress ? "destination" : "source";
        String farSide = ingress ? "source" : "destination";
        if (near != null && near.services() != null) {
            errors.add(path.field(nearSide).field("services"),
                    "not allowed in an " + (ingress ? "ingress" : "egress") + " rule's " + nearSide);
        }
        if (far != null && far.services() != null) {
            if (global && (far.services().namespace() == null || far.services().namespace().isEmpty())) {
                errors.add(path.field(farSide).field("services").field("namespace"),
                        "is required in a global policy");
            }
            if (!ingress && (!far.ports().isEmpty() || !far.notPorts().isEmpty())) {
                errors.add(path.field(farSide).field(far.ports().isEmpty() ? "notPorts" : "ports"),
                        "cannot be combined with services (the service's ports apply)");
            }
        }
        if (!ingress && RuleValidator.usesHttp(r)) {
            errors.add(path.field("http"), "HTTP match is not allowed in egress rules");
        }
    }
}
