package calico.apiserver.discovery;

import calico.api.model.ResourceKind;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * What discovery says about each served kind: Calico's short names (from its API server's REST
 * storage registrations), the verbs, and the singular name. Every {@link ResourceKind} is served
 * but the {@link ResourceKind#kubernetesOnly() Kubernetes-only} ones (a Kubernetes Service is the
 * core API's, never Calico's), so kinds added to calico-api appear here without a change.
 */
public final class KindCatalog {

    /** The verbs of every kind (Calico serves the full set on each). */
    public static final List<String> VERBS =
            List.of("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch");

    private static final Map<String, List<String>> SHORT_NAMES = Map.ofEntries(
            Map.entry("networkpolicies", List.of("cnp", "caliconetworkpolicy", "caliconetworkpolicies")),
            Map.entry("globalnetworkpolicies", List.of("gnp", "cgnp", "calicoglobalnetworkpolicies")),
            Map.entry("stagednetworkpolicies", List.of("snp")),
            Map.entry("stagedglobalnetworkpolicies", List.of("sgnp")),
            Map.entry("stagedkubernetesnetworkpolicies", List.of("sknp")),
            Map.entry("networksets", List.of("netsets")),
            Map.entry("hostendpoints", List.of("hep", "heps")),
            Map.entry("bgpconfigurations", List.of("bgpconfig", "bgpconfigs")),
            Map.entry("felixconfigurations", List.of("felixconfig", "felixconfigs")),
            Map.entry("kubecontrollersconfigurations", List.of("kcconfig")),
            Map.entry("clusterinformations", List.of("clusterinfo")));

    /**
     * Calico's API server gives only its two policy kinds a categories list, and that list holds
     * one empty string (their REST storage's {@code Categories()}), so discovery shows
     * {@code "categories": [""]} for them and nothing for the others: no category name
     * ({@code kubectl get calico}, {@code kubectl get all}) selects any Calico kind.
     */
    private static final List<String> POLICY_CATEGORIES = List.of("");

    private static final List<ResourceKind> SERVED =
            Arrays.stream(ResourceKind.values()).filter(k -> !k.kubernetesOnly()).toList();

    private KindCatalog() {
    }

    public static List<ResourceKind> kinds() {
        return SERVED;
    }

    public static List<String> shortNames(ResourceKind kind) {
        return SHORT_NAMES.getOrDefault(kind.plural(), List.of());
    }

    /** {@return the categories discovery publishes for the kind}; empty means the field is left out. */
    public static List<String> categories(ResourceKind kind) {
        return switch (kind) {
            case NETWORK_POLICY, GLOBAL_NETWORK_POLICY -> POLICY_CATEGORIES;
            default -> List.of();
        };
    }

    public static String singular(ResourceKind kind) {
        return kind.kind().toLowerCase(Locale.ROOT);
    }

    /** Policies carry the tier in their name and are authorized through it. */
    public static boolean tiered(ResourceKind kind) {
        return switch (kind) {
            case NETWORK_POLICY, GLOBAL_NETWORK_POLICY, STAGED_NETWORK_POLICY, STAGED_GLOBAL_NETWORK_POLICY -> true;
            default -> false;
        };
    }

    public static Optional<ResourceKind> byPlural(String plural) {
        return ResourceKind.byPlural(plural).filter(k -> !k.kubernetesOnly());
    }
}
