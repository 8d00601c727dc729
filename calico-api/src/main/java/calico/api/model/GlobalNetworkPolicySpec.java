package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.annotation.JsonSerialize;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/** Spec of a {@link GlobalNetworkPolicy} (and, with {@code stagedAction}, its staged form). */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record GlobalNetworkPolicySpec(
        String tier,
        @JsonSerialize(using = OrderSerializer.class) Double order,
        List<Rule> ingress,
        List<Rule> egress,
        String selector,
        List<PolicyType> types,
        Boolean doNotTrack,
        @JsonProperty("preDNAT") Boolean preDNAT,
        Boolean applyOnForward,
        String serviceAccountSelector,
        String namespaceSelector,
        List<String> performanceHints) {

    public GlobalNetworkPolicySpec {
        ingress = ingress == null ? List.of() : List.copyOf(ingress);
        egress = egress == null ? List.of() : List.copyOf(egress);
        types = types == null ? List.of() : List.copyOf(types);
        performanceHints = performanceHints == null ? List.of() : List.copyOf(performanceHints);
    }
}
