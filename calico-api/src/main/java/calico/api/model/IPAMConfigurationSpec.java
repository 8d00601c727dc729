package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * Spec of the {@link IPAMConfiguration} {@code default}. Absent means Calico's default:
 * {@code strictAffinity} false (a node may borrow from other nodes' blocks),
 * {@code autoAllocateBlocks} true, {@code maxBlocksPerHost} 0 (no limit).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record IPAMConfigurationSpec(Boolean strictAffinity, Boolean autoAllocateBlocks, Integer maxBlocksPerHost) {
}
