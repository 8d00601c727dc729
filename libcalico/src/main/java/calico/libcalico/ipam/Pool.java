package calico.libcalico.ipam;

import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.IPPoolSpec.AllowedUse;
import calico.api.net.Cidr;
import calico.api.selector.Selector;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

/**
 * An IP pool as IPAM uses it, with Calico's defaults for anything the stored pool leaves unset
 * (block size /26 or /122, node selector {@code all()}, uses Workload and Tunnel, automatic assignment).
 */
record Pool(String name, Cidr cidr, int blockSize, boolean disabled, Selector nodeSelector, Set<AllowedUse> uses,
            boolean manual) {

    static Pool of(IPPool p) {
        IPPoolSpec s = p.spec();
        Cidr cidr = Cidr.parse(s.cidr()).network();
        int blockSize = s.blockSize() != null ? s.blockSize() : cidr.version() == 4 ? 26 : 122;
        Selector selector = s.nodeSelector() == null || s.nodeSelector().isBlank() ? Selector.all()
                : Selector.parse(s.nodeSelector());
        Set<AllowedUse> uses = s.allowedUses().isEmpty() ? EnumSet.of(AllowedUse.Workload, AllowedUse.Tunnel)
                : EnumSet.copyOf(s.allowedUses());
        return new Pool(p.metadata().name(), cidr, blockSize, Boolean.TRUE.equals(s.disabled()), selector, uses,
                s.assignmentMode() == IPPoolSpec.AssignmentMode.Manual);
    }

    boolean selectsAllNodes() {
        return nodeSelector.equals(Selector.all());
    }

    boolean selects(Map<String, String> nodeLabels) {
        return nodeSelector.matches(nodeLabels);
    }

    /** {@return the block of this pool that holds {@code ip}}'s network, by the pool's block size. */
    Cidr blockFor(calico.api.net.IpAddress ip) {
        return new Cidr(ip.mask(blockSize), blockSize);
    }
}
