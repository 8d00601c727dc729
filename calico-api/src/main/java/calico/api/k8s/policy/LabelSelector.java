package calico.api.k8s.policy;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Map;

/**
 * A Kubernetes {@code metav1.LabelSelector}. An empty selector ({@code {}}) selects everything;
 * callers keep {@code null} (field absent) distinct from empty because a network policy peer
 * gives the two different meanings.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record LabelSelector(Map<String, String> matchLabels, List<Requirement> matchExpressions) {

    public LabelSelector {
        matchLabels = matchLabels == null ? Map.of() : Map.copyOf(matchLabels);
        matchExpressions = matchExpressions == null ? List.of() : List.copyOf(matchExpressions);
    }

    /** {@return the selector that selects everything} ({@code {}}). */
    public static LabelSelector everything() {
        return new LabelSelector(null, null);
    }

    public static LabelSelector matching(Map<String, String> labels) {
        return new LabelSelector(labels, null);
    }

    @JsonIgnore
    public boolean isEmpty() {
        return matchLabels.isEmpty() && matchExpressions.isEmpty();
    }

    /** One {@code matchExpressions} entry. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record Requirement(String key, Operator operator, List<String> values) {
        public Requirement {
            values = values == null ? List.of() : List.copyOf(values);
        }
    }

    /** The four operators Kubernetes defines, spelled as in its API. */
    public enum Operator {
        In, NotIn, Exists, DoesNotExist
    }
}
