package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.annotation.JsonSerialize;

/** Spec of a {@link Tier}: its order among tiers and the action when no policy in it decides. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record TierSpec(@JsonSerialize(using = OrderSerializer.class) Double order, Action defaultAction) {
}
