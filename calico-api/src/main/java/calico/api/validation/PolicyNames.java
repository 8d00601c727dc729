package calico.api.validation;

import java.util.regex.Pattern;

/** Name rules for (staged) global and namespaced Calico policies. */
final class PolicyNames {

    static final String DEFAULT_TIER = "default";
    /** Prefix of policies converted from Kubernetes NetworkPolicies; always in tier {@code default}. */
    static final String KUBERNETES_PREFIX = "knp.default.";
    /** Prefix of global policies converted from AdminNetworkPolicies; always in tier {@code kube-admin}. */
    static final String ADMIN_PREFIX = "kanp.adminnetworkpolicy.";
    /** Prefix of the global policy converted from the BaselineAdminNetworkPolicy; tier {@code kube-baseline}. */
    static final String BASELINE_PREFIX = "kbanp.baselineadminnetworkpolicy.";
    /** Prefix of policies converted from OpenStack security groups; tier {@code default}. */
    static final String OPENSTACK_PREFIX = "ossg.default.";

    private static final String LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
    private static final String SUBDOMAIN = LABEL + "(\\." + LABEL + ")*";
    /** Global policies: one label, optionally prefixed by one more (the tier). */
    private static final Pattern GLOBAL = Pattern.compile("(" + LABEL + "\\.)?" + LABEL
            + "|(kanp\\.adminnetworkpolicy|kbanp\\.baselineadminnetworkpolicy)\\." + SUBDOMAIN);
    /** Namespaced policies: the same, or a subdomain after {@code knp.default.} / {@code ossg.default.}. */
    private static final Pattern NAMESPACED = Pattern.compile(
            LABEL + "(\\." + LABEL + ")?|(knp|ossg)\\.default\\." + SUBDOMAIN);

    private PolicyNames() {
    }

    /**
     * Checks a policy name against its format and its tier.
     *
     * @param tier the policy's tier after defaulting
     */
    static void check(String name, String tier, boolean namespaced, ValidationOptions options,
                      FieldPath path, Errors errors) {
        if (name == null || name.isEmpty()) {
            return; // reported by MetadataValidator
        }
        if (name.length() > Names.SUBDOMAIN_MAX) {
            errors.add(path, "must be at most " + Names.SUBDOMAIN_MAX + " characters (is " + name.length() + ")");
            return;
        }
        Pattern format = namespaced ? NAMESPACED : GLOBAL;
        if (!format.matcher(name).matches()) {
            errors.add(path, namespaced
                    ? "must be a DNS-1123 label, optionally prefixed with '<tier>.' (lower case alphanumeric"
                    + " characters or '-')"
                    : "must be a DNS-1123 label, optionally prefixed with '<tier>.' (lower case alphanumeric"
                    + " characters or '-'; at most one '.')");
            return;
        }
        String adminPrefix = namespaced ? null : name.startsWith(ADMIN_PREFIX) ? ADMIN_PREFIX
                : name.startsWith(BASELINE_PREFIX) ? BASELINE_PREFIX : null;
        if (adminPrefix != null) {
            String adminTier = adminPrefix.equals(ADMIN_PREFIX) ? "kube-admin" : "kube-baseline";
            if (!options.allowKubernetesPolicyNames()) {
                errors.add(path, "the prefix '" + adminPrefix + "' is reserved for policies converted from "
                        + (adminPrefix.equals(ADMIN_PREFIX) ? "AdminNetworkPolicies" : "BaselineAdminNetworkPolicies"));
            } else if (!adminTier.equals(tier)) {
                errors.add(path, "policies named '" + adminPrefix + "...' belong to tier " + adminTier + ", not " + tier);
            }
            return;
        }
        boolean converted = name.startsWith(KUBERNETES_PREFIX) || name.startsWith(OPENSTACK_PREFIX);
        if (name.startsWith(KUBERNETES_PREFIX) && !options.allowKubernetesPolicyNames()) {
            errors.add(path, "the prefix '" + KUBERNETES_PREFIX + "' is reserved for policies converted from"
                    + " Kubernetes NetworkPolicies");
            return;
        }
        if (converted) {
            if (!DEFAULT_TIER.equals(tier)) {
                String prefix = name.startsWith(KUBERNETES_PREFIX) ? KUBERNETES_PREFIX : OPENSTACK_PREFIX;
                errors.add(path, "policies named '" + prefix + "...' belong to tier default, not " + tier);
            }
            return;
        }
        if (options.policyNaming() == PolicyNaming.TIER_PREFIXED) {
            int dot = name.indexOf('.');
            if (dot < 0) {
                if (!DEFAULT_TIER.equals(tier)) {
                    errors.add(path, "a policy in tier " + tier + " must be named " + tier + "." + name);
                }
            } else if (!name.substring(0, dot).equals(tier)) {
                errors.add(path, "the prefix '" + name.substring(0, dot + 1) + "' does not match the policy's tier "
                        + tier + ": name it " + tier + "." + name.substring(dot + 1));
            }
        }
    }
}
