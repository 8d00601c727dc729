package calico.api.k8s;

import calico.api.model.Action;
import calico.api.model.GlobalNetworkPolicy;
import calico.api.model.GlobalNetworkPolicySpec;
import calico.api.model.ObjectMeta;
import calico.api.model.PolicyType;
import calico.api.model.Rule;
import calico.api.validation.FieldError;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Converts an AdminNetworkPolicy into the GlobalNetworkPolicy {@code kanp.adminnetworkpolicy.<name>}
 * in tier {@code kube-admin} (order 1000, default action Pass), ordered by its priority, as
 * Calico's Kubernetes datastore presents it. Rules: {@link AdminPolicyRules} (Allow, Deny, Pass).
 * The subject becomes the policy's namespaceSelector and selector; the types are those with rules.
 */
public final class AdminNetworkPolicyConverter {

    public static final String NAME_PREFIX = "kanp.adminnetworkpolicy.";
    public static final String TIER = "kube-admin";

    private final AdminPolicyRules rules = new AdminPolicyRules(Set.of(Action.Allow, Action.Deny, Action.Pass));

    public static String policyName(String kubernetesName) {
        return NAME_PREFIX + kubernetesName;
    }

    /** {@return the AdminNetworkPolicy name behind a converted policy name}, empty for other names. */
    public static Optional<String> kubernetesName(String calicoName) {
        return AdminPolicyRules.unprefixed(NAME_PREFIX, calicoName);
    }

    public Conversion<GlobalNetworkPolicy> convert(KubeAdminNetworkPolicy anp) {
        KubeObjectMeta m = anp.metadata();
        String what = "AdminNetworkPolicy " + (m == null || m.name() == null ? "<no name>" : m.name());
        KubeAdminNetworkPolicy.Spec spec = anp.spec() == null
                ? new KubeAdminNetworkPolicy.Spec(null, null, null, null) : anp.spec();
        if (spec.priority() == null || spec.priority() < 0 || spec.priority() > 1000) {
            throw new KubernetesConversionException(what, "spec.priority",
                    spec.priority() == null ? "is required (0-1000)" : spec.priority() + " is outside 0-1000");
        }
        return convert(what, m, policyName(m == null ? null : m.name()), TIER, spec.priority().doubleValue(),
                spec.subject(), spec.ingress(), spec.egress(), rules);
    }

    /** The conversion both admin kinds share once their own fields are checked. */
    static Conversion<GlobalNetworkPolicy> convert(String what, KubeObjectMeta m, String name, String tier, double order,
                                                   KubeAdminNetworkPolicy.Subject subject,
                                                   List<calico.api.k8s.policy.AdminNetworkPolicyRule> ingress,
                                                   List<calico.api.k8s.policy.AdminNetworkPolicyRule> egress,
                                                   AdminPolicyRules rules) {
        if (m == null || m.name() == null || m.name().isEmpty()) {
            throw new KubernetesConversionException(what, "metadata.name", "is required");
        }
        String[] selectors = subject(what, subject);
        List<FieldError> dropped = new ArrayList<>();
        List<Rule> in = rules.convert(ingress, true, "spec.ingress", dropped);
        List<Rule> out = rules.convert(egress, false, "spec.egress", dropped);
        List<PolicyType> types = new ArrayList<>(2);
        if (!in.isEmpty()) {
            types.add(PolicyType.Ingress);
        }
        if (!out.isEmpty()) {
            types.add(PolicyType.Egress);
        }
        String uid = DerivedUid.ofObject(what, m);
        ObjectMeta meta = new ObjectMeta(name, null, null, uid, m.resourceVersion(), null, m.creationTimestamp(),
                null, null, null, null, null);
        GlobalNetworkPolicySpec gnp = new GlobalNetworkPolicySpec(tier, order, in, out, selectors[1], types,
                null, null, null, null, selectors[0], null);
        return new Conversion<>(new GlobalNetworkPolicy(meta, gnp), dropped);
    }

    /** {@return namespaceSelector and selector for a subject}; a policy without a valid subject is refused whole. */
    private static String[] subject(String what, KubeAdminNetworkPolicy.Subject s) {
        if (s == null || (s.namespaces() == null) == (s.pods() == null)) {
            throw new KubernetesConversionException(what, "spec.subject", "exactly one of namespaces or pods must be set");
        }
        try {
            if (s.namespaces() != null) {
                return new String[] {KubeSelectors.namespaceSelector(s.namespaces()), KubeSelectors.podSelector(null)};
            }
            calico.api.k8s.policy.LabelSelector ns = s.pods().namespaceSelector();
            return new String[] {
                KubeSelectors.namespaceSelector(ns == null ? calico.api.k8s.policy.LabelSelector.everything() : ns),
                KubeSelectors.podSelector(s.pods().podSelector())};
        } catch (FieldProblem e) {
            FieldProblem p = e.under(s.namespaces() != null ? "spec.subject.namespaces" : "spec.subject.pods");
            throw new KubernetesConversionException(what, p.field(), p.reason());
        }
    }
}
