package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.annotation.JsonSerialize;
import java.util.List;

/**
 * Spec of a {@link StagedNetworkPolicy}: {@code stagedAction} plus exactly the fields of
 * {@link NetworkPolicySpec}.
 */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record StagedNetworkPolicySpec(
        StagedAction stagedAction,
        String tier,
        @JsonSerialize(using = OrderSerializer.class) Double order,
        List<Rule> ingress,
        List<Rule> egress,
        String selector,
        List<PolicyType> types,
        String serviceAccountSelector,
        List<String> performanceHints) {

    public StagedNetworkPolicySpec {
        ingress = ingress == null ? List.of() : List.copyOf(ingress);
        egress = egress == null ? List.of() : List.copyOf(egress);
        types = types == null ? List.of() : List.copyOf(types);
        performanceHints = performanceHints == null ? List.of() : List.copyOf(performanceHints);
    }

    /** {@return the staged policy as the enforced spec it would set} ({@code stagedAction} dropped). */
    public NetworkPolicySpec toEnforced() {
        return new NetworkPolicySpec(tier, order, ingress, egress, selector, types, serviceAccountSelector,
                performanceHints);
    }

    /** {@return a staged spec that would set {@code spec}}. */
    public static StagedNetworkPolicySpec of(StagedAction action, NetworkPolicySpec spec) {
        return new StagedNetworkPolicySpec(action, spec.tier(), spec.order(), spec.ingress(), spec.egress(),
                spec.selector(), spec.types(), spec.serviceAccountSelector(), spec.performanceHints());
    }
}
