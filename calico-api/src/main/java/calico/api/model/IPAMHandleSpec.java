package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Map;

/**
 * Spec of an {@link IPAMHandle}: the handle ID as the owner wrote it (the resource name is its
 * lower-case form) and, per block CIDR, how many addresses of that block the handle holds.
 */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record IPAMHandleSpec(
        @JsonProperty("handleID") String handleID,
        Map<String, Integer> block,
        Boolean deleted) {

    public IPAMHandleSpec {
        block = block == null ? Map.of() : Map.copyOf(block);
    }
}
