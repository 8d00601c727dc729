package calico.api.model;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * Spec of an {@link IPAMBlock}, with Calico's field names ({@code libcalico-go} IPAMBlockSpec).
 *
 * <p>{@code allocations} has one entry per address of the block (ordinal = offset from the
 * block's first address): {@code null} when free, otherwise the index into {@code attributes}
 * of the owner. {@code unallocated} lists the free ordinals in the order they will be handed
 * out. {@code sequenceNumber} grows with every write; {@code sequenceNumberForAllocation}
 * (ordinal as a string → sequence number at allocation) lets a release check that an address
 * was not released and re-allocated meanwhile.
 */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record IPAMBlockSpec(
        String cidr,
        String affinity,
        String affinityClaimTime,
        @NullableItems List<Integer> allocations,
        List<Integer> unallocated,
        List<AllocationAttribute> attributes,
        Long sequenceNumber,
        Map<String, Long> sequenceNumberForAllocation,
        Boolean deleted,
        Boolean strictAffinity) {

    /** Prefix of a host affinity: {@code host:<node>}. */
    public static final String HOST_AFFINITY_PREFIX = "host:";

    public IPAMBlockSpec {
        allocations = nullableCopy(allocations);
        unallocated = unallocated == null ? List.of() : List.copyOf(unallocated);
        attributes = attributes == null ? List.of() : List.copyOf(attributes);
        sequenceNumberForAllocation = sequenceNumberForAllocation == null ? Map.of()
                : Map.copyOf(sequenceNumberForAllocation);
    }

    /** {@return the node this block is affine to}, or null when it has no host affinity. */
    @JsonIgnore
    public String affineNode() {
        return affinity != null && affinity.startsWith(HOST_AFFINITY_PREFIX)
                ? affinity.substring(HOST_AFFINITY_PREFIX.length()) : null;
    }

    /** Allocations may hold nulls (free addresses), which {@link List#copyOf} refuses. */
    private static List<Integer> nullableCopy(List<Integer> in) {
        return in == null ? List.of() : Collections.unmodifiableList(new ArrayList<>(in));
    }

    /** Who owns the allocations that point at this entry: a handle and free-form attributes. */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record AllocationAttribute(
            @JsonProperty("handle_id") String handleId,
            Map<String, String> secondary) {

        public AllocationAttribute {
            secondary = secondary == null ? Map.of() : Map.copyOf(secondary);
        }
    }
}
