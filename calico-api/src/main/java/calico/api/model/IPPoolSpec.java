package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * Spec of an {@link IPPool}: a CIDR that Calico IPAM hands out in blocks of
 * {@code blockSize}, and how traffic from it is routed (IPIP/VXLAN encapsulation, NAT).
 * Unset fields take Calico's defaults later (defaulting is not the model's job).
 */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record IPPoolSpec(
        String cidr,
        EncapsulationMode vxlanMode,
        EncapsulationMode ipipMode,
        Boolean natOutgoing,
        Boolean disabled,
        @JsonProperty("disableBGPExport") Boolean disableBGPExport,
        Integer blockSize,
        String nodeSelector,
        String namespaceSelector,
        List<AllowedUse> allowedUses,
        AssignmentMode assignmentMode) {

    public IPPoolSpec {
        allowedUses = allowedUses == null ? List.of() : List.copyOf(allowedUses);
    }

    /** {@return a pool with only a CIDR}; everything else defaulted later. */
    public static IPPoolSpec ofCidr(String cidr) {
        return new IPPoolSpec(cidr, null, null, null, null, null, null, null, null, null, null);
    }

    /** What addresses from the pool may be used for. */
    public enum AllowedUse {
        Workload, Tunnel, LoadBalancer
    }

    /** Whether IPAM hands out addresses automatically or only when explicitly requested. */
    public enum AssignmentMode {
        Automatic, Manual
    }
}
