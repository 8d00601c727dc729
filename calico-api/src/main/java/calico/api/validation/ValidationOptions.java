package calico.api.validation;

import java.util.Objects;

/**
 * Choices where Calico versions or callers differ.
 *
 * @param policyNaming              the tier-prefix rule for policy names
 * @param allowKubernetesPolicyNames whether NetworkPolicy names starting {@code knp.default.}
 *                                   are accepted; only the Kubernetes-to-Calico conversion may
 *                                   produce them, so user-facing writes leave this false
 */
public record ValidationOptions(PolicyNaming policyNaming, boolean allowKubernetesPolicyNames) {

    /** What user-facing writes (apiserver, calicoctl-style clients) use. */
    public static final ValidationOptions DEFAULT = new ValidationOptions(PolicyNaming.TIER_PREFIXED, false);

    public ValidationOptions {
        Objects.requireNonNull(policyNaming, "policyNaming");
    }
}
