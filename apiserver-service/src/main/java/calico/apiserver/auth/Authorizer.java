package calico.apiserver.auth;

import calico.api.model.Resource;
import calico.api.model.ResourceKind;
import calico.apiserver.discovery.KindCatalog;
import calico.apiserver.errors.ApiException;

/**
 * Authorization of every resource request, plus Calico's tier rule for policies: to act on a
 * policy in tier T the user also needs {@code get} on {@code tiers} T. The policy permission
 * itself may be granted on the plain resource ({@code globalnetworkpolicies}) or, as Calico's
 * RBAC examples do, on {@code tier.globalnetworkpolicies} with resource name {@code T.*}.
 */
public final class Authorizer implements AutoCloseable {

    public static final String GROUP = "projectcalico.org";

    private final AccessCheck rules;

    public Authorizer(AccessCheck rules) {
        this.rules = rules;
    }

    /** Releases the decision source's connections (the SubjectAccessReview client). */
    @Override
    public void close() throws Exception {
        if (rules instanceof AutoCloseable c) {
            c.close();
        }
    }

    /** The request-level check (before any tier is known). */
    public boolean allows(User u, String verb, ResourceKind kind, String namespace, String name) {
        if (rules.allows(u, verb, GROUP, kind.plural(), namespace, name)) {
            return true;
        }
        // Tiered policies may instead be granted through tier.<plural>; the tier check follows.
        return KindCatalog.tiered(kind) && rules.allows(u, verb, GROUP, "tier." + kind.plural(), namespace, null)
                || KindCatalog.tiered(kind) && name != null
                && rules.allows(u, verb, GROUP, "tier." + kind.plural(), namespace, tierOfName(name) + ".*");
    }

    public boolean tierAllows(User u, String verb, ResourceKind kind, String namespace, String tier) {
        if (!rules.allows(u, "get", GROUP, "tiers", null, tier)) {
            return false;
        }
        return rules.allows(u, verb, GROUP, kind.plural(), namespace, null)
                || rules.allows(u, verb, GROUP, "tier." + kind.plural(), namespace, tier + ".*");
    }

    public void checkTier(User u, String verb, ResourceKind kind, String namespace, String name, String tier) {
        if (!tierAllows(u, verb, kind, namespace, tier)) {
            throw ApiException.forbidden(u.name(), verb, kind.plural(), namespace, name,
                    "user needs get access to tier \"" + tier + "\" and " + verb + " access to its "
                            + kind.plural());
        }
    }

    /** {@return the tier a policy name belongs to}: the prefix before the first dot, else {@code default}. */
    public static String tierOfName(String name) {
        if (name.startsWith("knp.default.") || name.startsWith("ossg.default.")) {
            return "default";
        }
        int dot = name.indexOf('.');
        return dot < 0 ? "default" : name.substring(0, dot);
    }

    /** {@return the tier of a stored policy}. */
    public static String tierOf(Resource r) {
        try {
            Object spec = r.getClass().getMethod("spec").invoke(r);
            if (spec != null) {
                Object tier = spec.getClass().getMethod("tier").invoke(spec);
                if (tier instanceof String t && !t.isEmpty()) {
                    return t;
                }
            }
        } catch (ReflectiveOperationException e) {
            // not a policy
        }
        return tierOfName(r.metadata().name());
    }
}
