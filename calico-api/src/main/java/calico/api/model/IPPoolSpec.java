package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;

/** Spec of a {@link IPPool}. PLACEHOLDER: fields to be completed. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record IPPoolSpec(String placeholder) {
}
