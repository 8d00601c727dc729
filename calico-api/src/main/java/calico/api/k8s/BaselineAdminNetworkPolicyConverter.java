package calico.api.k8s;

import calico.api.model.Action;
import calico.api.model.GlobalNetworkPolicy;
import java.util.Optional;
import java.util.Set;

/**
 * Converts the BaselineAdminNetworkPolicy into the GlobalNetworkPolicy
 * {@code kbanp.baselineadminnetworkpolicy.<name>} in tier {@code kube-baseline} (order
 * 10,000,000, after the default tier; default action Pass), order 1000 within it (it is a
 * singleton, so its order competes with nothing). Rules: {@link AdminPolicyRules}, Allow and Deny only.
 */
public final class BaselineAdminNetworkPolicyConverter {

    public static final String NAME_PREFIX = "kbanp.baselineadminnetworkpolicy.";
    public static final String TIER = "kube-baseline";
    public static final double ORDER = 1000.0;

    private final AdminPolicyRules rules = new AdminPolicyRules(Set.of(Action.Allow, Action.Deny));

    public static String policyName(String kubernetesName) {
        return NAME_PREFIX + kubernetesName;
    }

    /** {@return the BaselineAdminNetworkPolicy name behind a converted policy name}, empty for other names. */
    public static Optional<String> kubernetesName(String calicoName) {
        return AdminPolicyRules.unprefixed(NAME_PREFIX, calicoName);
    }

    public Conversion<GlobalNetworkPolicy> convert(KubeBaselineAdminNetworkPolicy banp) {
        KubeObjectMeta m = banp.metadata();
        String what = "BaselineAdminNetworkPolicy " + (m == null || m.name() == null ? "<no name>" : m.name());
        KubeBaselineAdminNetworkPolicy.Spec spec = banp.spec() == null
                ? new KubeBaselineAdminNetworkPolicy.Spec(null, null, null) : banp.spec();
        return AdminNetworkPolicyConverter.convert(what, m, policyName(m == null ? null : m.name()), TIER, ORDER,
                spec.subject(), spec.ingress(), spec.egress(), rules);
    }
}
