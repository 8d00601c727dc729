package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Map;

/** Spec of a {@link Profile}: rules applied after policies, and labels inherited by endpoints. */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record ProfileSpec(List<Rule> ingress, List<Rule> egress, Map<String, String> labelsToApply) {
    public ProfileSpec {
        ingress = ingress == null ? List.of() : List.copyOf(ingress);
        egress = egress == null ? List.of() : List.copyOf(egress);
        labelsToApply = labelsToApply == null ? Map.of() : Map.copyOf(labelsToApply);
    }
}
