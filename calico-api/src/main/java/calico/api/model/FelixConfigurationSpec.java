package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;

/** Spec of a {@link FelixConfiguration}. PLACEHOLDER: fields to be completed. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record FelixConfigurationSpec(String placeholder) {
}
