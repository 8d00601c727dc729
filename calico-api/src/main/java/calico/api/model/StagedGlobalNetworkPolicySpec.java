package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.annotation.JsonSerialize;
import java.util.List;

/**
 * Spec of a {@link StagedGlobalNetworkPolicy}: what the enforced {@link GlobalNetworkPolicy}
 * would become ({@code stagedAction} Set, the default) or that it would be deleted (Delete).
 * The remaining fields are exactly those of {@link GlobalNetworkPolicySpec}.
 */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record StagedGlobalNetworkPolicySpec(
        StagedAction stagedAction,
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

    public StagedGlobalNetworkPolicySpec {
        ingress = ingress == null ? List.of() : List.copyOf(ingress);
        egress = egress == null ? List.of() : List.copyOf(egress);
        types = types == null ? List.of() : List.copyOf(types);
        performanceHints = performanceHints == null ? List.of() : List.copyOf(performanceHints);
    }

    /** {@return the staged policy as the enforced spec it would set} ({@code stagedAction} dropped). */
    public GlobalNetworkPolicySpec toEnforced() {
        return new GlobalNetworkPolicySpec(tier, order, ingress, egress, selector, types, doNotTrack, preDNAT,
                applyOnForward, serviceAccountSelector, namespaceSelector, performanceHints);
    }

    /** {@return a staged spec that would set {@code spec}}. */
    public static StagedGlobalNetworkPolicySpec of(StagedAction action, GlobalNetworkPolicySpec spec) {
        return new StagedGlobalNetworkPolicySpec(action, spec.tier(), spec.order(), spec.ingress(), spec.egress(),
                spec.selector(), spec.types(), spec.doNotTrack(), spec.preDNAT(), spec.applyOnForward(),
                spec.serviceAccountSelector(), spec.namespaceSelector(), spec.performanceHints());
    }
}
