package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.Set;

/**
 * Spec of a {@link BlockAffinity}, with Calico's field names. {@code state} is one of
 * {@value #CONFIRMED}, {@value #PENDING}, {@value #PENDING_DELETION}; {@code deleted} is a
 * string ({@code "true"}/{@code "false"}) because Calico's custom resource defines it so.
 */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record BlockAffinitySpec(String state, String node, String type, String cidr, String deleted) {

    public static final String CONFIRMED = "confirmed";
    public static final String PENDING = "pending";
    public static final String PENDING_DELETION = "pendingDeletion";
    /** Every state Calico writes. */
    public static final Set<String> STATES = Set.of(CONFIRMED, PENDING, PENDING_DELETION);

    /** {@return a host affinity in {@code state}} with {@code deleted: "false"}, as Calico writes it. */
    public static BlockAffinitySpec of(String state, String node, String cidr) {
        return new BlockAffinitySpec(state, node, null, cidr, "false");
    }

    public BlockAffinitySpec withState(String newState) {
        return new BlockAffinitySpec(newState, node, type, cidr, deleted);
    }
}
