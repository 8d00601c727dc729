package calico.api.k8s;

import calico.api.model.ObjectMeta;
import calico.api.model.Profile;
import calico.api.model.ProfileSpec;
import calico.api.model.Rule;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Converts Namespaces and ServiceAccounts into the Profiles that carry their labels to the
 * workload endpoints inside them.
 *
 * <ul>
 *   <li>Namespace {@code ns} → Profile {@code kns.<ns>}: {@code labelsToApply} holds each
 *       namespace label as {@code pcns.<key>} plus {@code pcns.projectcalico.org/name = ns};
 *       one Allow rule each way, so a namespace on its own never blocks traffic.</li>
 *   <li>ServiceAccount {@code sa} in {@code ns} → Profile {@code ksa.<ns>.<sa>}: labels as
 *       {@code pcsa.<key>} plus {@code pcsa.projectcalico.org/name = sa}; no rules.</li>
 * </ul>
 * Both carry the source's creationTimestamp, a UID derived from its UID ({@link DerivedUid}) and
 * Calico's combined revision ({@link #revision}).
 */
public final class ProfileConverter {

    public static final String NAMESPACE_PROFILE_PREFIX = "kns.";
    public static final String SERVICE_ACCOUNT_PROFILE_PREFIX = "ksa.";
    public static final String NAMESPACE_LABEL_PREFIX = "pcns.";
    public static final String SERVICE_ACCOUNT_LABEL_PREFIX = "pcsa.";
    /** Label key (after the prefix) holding the namespace's or service account's own name. */
    public static final String NAME_LABEL = "projectcalico.org/name";

    /** {@return {@code kns.<namespace>}}. */
    public static String namespaceProfileName(String namespace) {
        return NAMESPACE_PROFILE_PREFIX + namespace;
    }

    /** {@return {@code ksa.<namespace>.<serviceAccount>}}; an empty namespace means {@code default}, as in Calico. */
    public static String serviceAccountProfileName(String namespace, String serviceAccount) {
        String ns = namespace == null || namespace.isEmpty() ? "default" : namespace;
        return SERVICE_ACCOUNT_PROFILE_PREFIX + ns + "." + serviceAccount;
    }

    /** A service account by namespace and name, as named by a {@code ksa.} profile. */
    public record ServiceAccountRef(String namespace, String name) {
    }

    /** {@return the namespace behind a {@code kns.<ns>} profile name}, empty for other profiles. */
    public static Optional<String> namespaceOf(String profileName) {
        if (profileName == null || !profileName.startsWith(NAMESPACE_PROFILE_PREFIX)
                || profileName.length() == NAMESPACE_PROFILE_PREFIX.length()) {
            return Optional.empty();
        }
        return Optional.of(profileName.substring(NAMESPACE_PROFILE_PREFIX.length()));
    }

    /**
     * {@return the service account behind a {@code ksa.<ns>.<sa>} profile name}, empty for other
     * profiles. Namespaces cannot contain dots, so the first dot after the prefix ends it and
     * the service account name may contain dots.
     */
    public static Optional<ServiceAccountRef> serviceAccountOf(String profileName) {
        if (profileName == null || !profileName.startsWith(SERVICE_ACCOUNT_PROFILE_PREFIX)) {
            return Optional.empty();
        }
        String rest = profileName.substring(SERVICE_ACCOUNT_PROFILE_PREFIX.length());
        int dot = rest.indexOf('.');
        if (dot <= 0 || dot == rest.length() - 1) {
            return Optional.empty();
        }
        return Optional.of(new ServiceAccountRef(rest.substring(0, dot), rest.substring(dot + 1)));
    }

    public Profile namespace(KubeNamespace ns) {
        KubeObjectMeta m = ns.metadata();
        String what = "Namespace " + (m == null ? "<no metadata>" : m.name());
        if (m == null || m.name() == null || m.name().isEmpty()) {
            throw new KubernetesConversionException(what, "metadata.name", "is required");
        }
        Map<String, String> labels = prefixed(NAMESPACE_LABEL_PREFIX, m.labels());
        labels.put(NAMESPACE_LABEL_PREFIX + NAME_LABEL, m.name());
        ObjectMeta meta = meta(what, namespaceProfileName(m.name()), m, revision(m.resourceVersion(), ""));
        return new Profile(meta, new ProfileSpec(List.of(Rule.allow()), List.of(Rule.allow()), labels));
    }

    public Profile serviceAccount(KubeServiceAccount sa) {
        KubeObjectMeta m = sa.metadata();
        String what = "ServiceAccount " + (m == null ? "<no metadata>" : m.namespace() + "/" + m.name());
        if (m == null || m.name() == null || m.name().isEmpty()) {
            throw new KubernetesConversionException(what, "metadata.name", "is required");
        }
        Map<String, String> labels = prefixed(SERVICE_ACCOUNT_LABEL_PREFIX, m.labels());
        labels.put(SERVICE_ACCOUNT_LABEL_PREFIX + NAME_LABEL, m.name());
        ObjectMeta meta = meta(what, serviceAccountProfileName(m.namespace(), m.name()), m, revision("", m.resourceVersion()));
        return new Profile(meta, new ProfileSpec(null, null, labels));
    }

    private static Map<String, String> prefixed(String prefix, Map<String, String> labels) {
        Map<String, String> out = new HashMap<>();
        labels.forEach((k, v) -> out.put(prefix + k, v));
        return out;
    }

    /**
     * {@return Calico's combined profile revision {@code <namespace rv>/<service account rv>}}, or
     * {@code null} when the source has no resourceVersion (an object not read from the API server).
     */
    public static String revision(String namespaceRevision, String serviceAccountRevision) {
        String ns = namespaceRevision == null ? "" : namespaceRevision;
        String sa = serviceAccountRevision == null ? "" : serviceAccountRevision;
        return ns.isEmpty() && sa.isEmpty() ? null : ns + "/" + sa;
    }

    private static ObjectMeta meta(String what, String name, KubeObjectMeta m, String resourceVersion) {
        String uid = DerivedUid.ofObject(what, m);
        return new ObjectMeta(name, null, null, uid, resourceVersion, null, m.creationTimestamp(),
                null, null, null, null, null);
    }
}
