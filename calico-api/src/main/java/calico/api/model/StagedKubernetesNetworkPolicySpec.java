package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;

/** Spec of a {@link StagedKubernetesNetworkPolicy}. PLACEHOLDER: fields to be completed. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record StagedKubernetesNetworkPolicySpec(String placeholder) {
}
