package calico.api.validation;

import calico.api.model.EncapsulationMode;
import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec.AllowedUse;
import calico.api.model.IPPoolSpec.AssignmentMode;
import calico.api.model.IPPoolSpec;
import calico.api.net.Cidr;
import java.util.List;
import java.util.Optional;

/**
 * Defaults and checks IP pools as Calico's client does: block size 26 (IPv4) or 122 (IPv6),
 * encapsulation Never, node selector all(), uses [Workload, Tunnel], assignment Automatic,
 * and the CIDR written in canonical form. Overlap with other pools needs the other pools:
 * see {@link IpPoolOverlap}.
 */
final class IpPoolValidator {

    static final int DEFAULT_BLOCK_SIZE_V4 = 26;
    static final int DEFAULT_BLOCK_SIZE_V6 = 122;
    static final Cidr LINK_LOCAL_V4 = Cidr.parse("169.254.0.0/16");
    static final Cidr LINK_LOCAL_V6 = Cidr.parse("fe80::/10");

    private static final FieldPath SPEC = FieldPath.of("spec");

    private IpPoolValidator() {
    }

    static IPPoolSpec defaults(IPPoolSpec s) {
        IPPoolSpec spec = s != null ? s : IPPoolSpec.ofCidr(null);
        Optional<Cidr> cidr = Cidr.tryParse(spec.cidr());
        String canonical = cidr.filter(Cidr::isStrictlyMasked).map(Cidr::toString).orElse(spec.cidr());
        Integer blockSize = spec.blockSize() != null ? spec.blockSize()
                : cidr.map(c -> c.version() == 4 ? DEFAULT_BLOCK_SIZE_V4 : DEFAULT_BLOCK_SIZE_V6).orElse(null);
        return new IPPoolSpec(canonical,
                spec.vxlanMode() != null ? spec.vxlanMode() : EncapsulationMode.Never,
                spec.ipipMode() != null ? spec.ipipMode() : EncapsulationMode.Never,
                spec.natOutgoing(), spec.disabled(), spec.disableBGPExport(), blockSize,
                spec.nodeSelector() == null || spec.nodeSelector().isEmpty() ? "all()" : spec.nodeSelector(),
                spec.namespaceSelector(),
                spec.allowedUses().isEmpty() ? List.of(AllowedUse.Workload, AllowedUse.Tunnel) : spec.allowedUses(),
                spec.assignmentMode() != null ? spec.assignmentMode() : AssignmentMode.Automatic);
    }

    static void validate(IPPool pool, Errors errors) {
        MetadataValidator.validate(pool.metadata(), pool.resourceKind(), true, errors);
        IPPoolSpec s = pool.spec();
        Selectors.checkNoGlobal(s.nodeSelector(), SPEC.field("nodeSelector"), errors);
        Selectors.checkNoGlobal(s.namespaceSelector(), SPEC.field("namespaceSelector"), errors);
        boolean loadBalancer = s.allowedUses().contains(AllowedUse.LoadBalancer);
        boolean ipip = s.ipipMode() != EncapsulationMode.Never;
        boolean vxlan = s.vxlanMode() != EncapsulationMode.Never;
        if (ipip && vxlan) {
            errors.add(SPEC.field("vxlanMode"), "cannot enable both VXLAN and IPIP on the same IP pool");
        }
        allowedUses(s, loadBalancer, ipip || vxlan, errors);
        if (s.cidr() == null || s.cidr().isEmpty()) {
            errors.add(SPEC.field("cidr"), "is required");
            return;
        }
        Optional<Cidr> parsed = Cidr.tryParse(s.cidr());
        if (parsed.isEmpty()) {
            errors.add(SPEC.field("cidr"), "invalid CIDR \"" + s.cidr() + "\"");
            return;
        }
        Cidr cidr = parsed.get();
        if (!cidr.isStrictlyMasked()) {
            errors.add(SPEC.field("cidr"), "CIDR \"" + s.cidr() + "\" has host bits set: use " + cidr.network());
        }
        if (cidr.version() == 6 && ipip) {
            errors.add(SPEC.field("ipipMode"), "IPIP is not supported on an IPv6 IP pool");
        }
        int min = cidr.version() == 4 ? 20 : 116;
        int max = cidr.version() == 4 ? 32 : 128;
        if (s.blockSize() < min || s.blockSize() > max) {
            errors.add(SPEC.field("blockSize"), "IPv" + cidr.version() + " block size must be between " + min
                    + " and " + max);
        } else if (!Boolean.TRUE.equals(s.disabled()) && cidr.prefixLength() > s.blockSize()) {
            errors.add(SPEC.field("cidr"), "pool /" + cidr.prefixLength() + " is smaller than one block (/"
                    + s.blockSize() + "): the pool's prefix length must not exceed blockSize");
        }
        Cidr linkLocal = cidr.version() == 4 ? LINK_LOCAL_V4 : LINK_LOCAL_V6;
        if (cidr.overlaps(linkLocal)) {
            errors.add(SPEC.field("cidr"), "overlaps the link-local range " + linkLocal);
        }
    }

    private static void allowedUses(IPPoolSpec s, boolean loadBalancer, boolean encapsulated, Errors errors) {
        FieldPath uses = SPEC.field("allowedUses");
        for (int i = 0; i < s.allowedUses().size(); i++) {
            AllowedUse u = s.allowedUses().get(i);
            if (u == null) {
                errors.add(uses.index(i), "must be Workload, Tunnel or LoadBalancer");
            } else if (loadBalancer && u != AllowedUse.LoadBalancer) {
                errors.add(uses.index(i), "LoadBalancer cannot be combined with " + u);
            } else if (s.allowedUses().indexOf(u) != i) {
                errors.add(uses.index(i), u + " is listed more than once");
            }
        }
        if (!loadBalancer) {
            return;
        }
        if (encapsulated) {
            errors.add(uses, "a LoadBalancer pool cannot enable IPIP or VXLAN");
        }
        if (Boolean.TRUE.equals(s.disableBGPExport())) {
            errors.add(SPEC.field("disableBGPExport"), "a LoadBalancer pool's addresses must be exported over BGP");
        }
        if (!"all()".equals(s.nodeSelector())) {
            errors.add(SPEC.field("nodeSelector"), "a LoadBalancer pool must select all() nodes");
        }
    }
}
