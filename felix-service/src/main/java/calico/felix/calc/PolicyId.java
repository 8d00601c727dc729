package calico.felix.calc;

import calico.api.model.ResourceKind;
import java.util.Objects;

/**
 * Names an active policy to the dataplane.
 *
 * @param tier      the tier the policy declares (or {@code default})
 * @param namespace {@code null} for global kinds
 * @param kind      one of the five policy kinds; the staged ones are reported, never enforced
 */
public record PolicyId(String tier, String namespace, String name, ResourceKind kind) {

    public PolicyId {
        Objects.requireNonNull(tier, "tier");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(kind, "kind");
    }

    public boolean staged() {
        return kind == ResourceKind.STAGED_GLOBAL_NETWORK_POLICY || kind == ResourceKind.STAGED_NETWORK_POLICY
                || kind == ResourceKind.STAGED_KUBERNETES_NETWORK_POLICY;
    }

    /** {@return the name Calico sorts by}: {@code <namespace>/<name>} for namespaced policies. */
    public String sortName() {
        return namespace == null ? name : namespace + "/" + name;
    }

    @Override
    public String toString() {
        return (staged() ? "staged:" : "") + tier + "/" + sortName();
    }
}
