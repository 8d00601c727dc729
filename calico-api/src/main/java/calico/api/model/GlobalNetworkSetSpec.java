package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/** Spec of a {@link GlobalNetworkSet}: the CIDRs its labels stand for. */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record GlobalNetworkSetSpec(List<String> nets) {
    public GlobalNetworkSetSpec {
        nets = nets == null ? List.of() : List.copyOf(nets);
    }
}
