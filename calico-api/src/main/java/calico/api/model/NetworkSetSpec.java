package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/** Spec of a {@link NetworkSet}: the CIDRs its labels stand for. */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record NetworkSetSpec(List<String> nets) {
    public NetworkSetSpec {
        nets = nets == null ? List.of() : List.copyOf(nets);
    }
}
