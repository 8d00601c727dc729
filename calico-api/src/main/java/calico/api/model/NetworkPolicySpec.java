package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.annotation.JsonSerialize;
import java.util.List;

/** Spec of a namespaced {@link NetworkPolicy}. */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record NetworkPolicySpec(
        String tier,
        @JsonSerialize(using = OrderSerializer.class) Double order,
        List<Rule> ingress,
        List<Rule> egress,
        String selector,
        List<PolicyType> types,
        String serviceAccountSelector,
        List<String> performanceHints) {

    public NetworkPolicySpec {
        ingress = ingress == null ? List.of() : List.copyOf(ingress);
        egress = egress == null ? List.of() : List.copyOf(egress);
        types = types == null ? List.of() : List.copyOf(types);
        performanceHints = performanceHints == null ? List.of() : List.copyOf(performanceHints);
    }
}
