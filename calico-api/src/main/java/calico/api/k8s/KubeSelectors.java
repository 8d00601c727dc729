package calico.api.k8s;

import calico.api.k8s.policy.LabelSelector;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Translates Kubernetes label selectors into Calico selector text, term for term as Calico's
 * Kubernetes datastore writes them, so that the same policy produces the same selector (and so
 * the same IP-set IDs) here and there.
 *
 * <ul>
 *   <li>Pod selectors always start with {@code projectcalico.org/orchestrator == 'k8s'}, so a
 *       Kubernetes policy never selects non-Kubernetes endpoints; absent = that term alone.</li>
 *   <li>Namespace selectors: absent = {@code ""} (the policy's own namespace), empty =
 *       {@code all()} (every namespace). Keys are plain namespace label keys: the Calico
 *       {@code namespaceSelector} field matches namespace labels itself.</li>
 *   <li>matchLabels in key order, then matchExpressions in given order, joined by {@code " && "}.</li>
 * </ul>
 */
public final class KubeSelectors {

    /** The label every Kubernetes workload endpoint carries with value {@code k8s}. */
    public static final String ORCHESTRATOR_LABEL = "projectcalico.org/orchestrator";
    public static final String ORCHESTRATOR_TERM = ORCHESTRATOR_LABEL + " == 'k8s'";

    private KubeSelectors() {
    }

    /**
     * {@return the Calico selector for a pod selector}; {@code null} selects every pod.
     * @throws IllegalArgumentException naming the matchExpressions entry that lacks a key or operator
     */
    public static String podSelector(LabelSelector selector) {
        List<String> terms = new ArrayList<>();
        terms.add(ORCHESTRATOR_TERM);
        if (selector != null) {
            terms.addAll(terms(selector));
        }
        return String.join(" && ", terms);
    }

    /** {@return the Calico namespaceSelector}: {@code ""} when absent, {@code all()} when empty. */
    public static String namespaceSelector(LabelSelector selector) {
        if (selector == null) {
            return "";
        }
        if (selector.isEmpty()) {
            return "all()";
        }
        return String.join(" && ", terms(selector));
    }

    /**
     * {@return the selector for a node peer of an admin policy}: the host endpoints (endpoints
     * without the orchestrator label) whose labels match; empty = every host endpoint.
     */
    public static String nodeSelector(LabelSelector selector) {
        List<String> terms = new ArrayList<>();
        terms.add("!has(" + ORCHESTRATOR_LABEL + ")");
        terms.addAll(terms(selector));
        return String.join(" && ", terms);
    }

    private static List<String> terms(LabelSelector s) {
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, String> e : new TreeMap<>(s.matchLabels()).entrySet()) {
            out.add(e.getKey() + " == '" + e.getValue() + "'");
        }
        for (int i = 0; i < s.matchExpressions().size(); i++) {
            LabelSelector.Requirement r = s.matchExpressions().get(i);
            if (r.key() == null || r.key().isEmpty()) {
                throw new FieldProblem("matchExpressions[" + i + "].key", "is required");
            }
            if (r.operator() == null) {
                throw new FieldProblem("matchExpressions[" + i + "].operator", "is required (In, NotIn, Exists or DoesNotExist)");
            }
            String values = "{ '" + String.join("', '", r.values()) + "' }";
            out.add(switch (r.operator()) {
                case In -> r.key() + " in " + values;
                case NotIn -> r.key() + " not in " + values;
                case Exists -> "has(" + r.key() + ")";
                case DoesNotExist -> "! has(" + r.key() + ")";
            });
        }
        return out;
    }
}
