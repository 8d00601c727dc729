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
 * (block size /26 or /122, node and namespace selectors {@code all()}, uses Workload and Tunnel,
 * automatic assignment).
 */
record Pool(String name, Cidr cidr, int blockSize, boolean disabled, Selector nodeSelector, Set<AllowedUse> uses,
            boolean manual, Selector namespaceSelector) {

    static Pool of(IPPool p) {
        IPPoolSpec s = p.spec();
        Cidr cidr = Cidr.parse(s.cidr()).network();
        int blockSize = s.blockSize() != null ? s.blockSize() : cidr.version() == 4 ? 26 : 122;
        Selector selector = selector(s.nodeSelector());
        Set<AllowedUse> uses = s.allowedUses().isEmpty() ? EnumSet.of(AllowedUse.Workload, AllowedUse.Tunnel)
                : EnumSet.copyOf(s.allowedUses());
        return new Pool(p.metadata().name(), cidr, blockSize, Boolean.TRUE.equals(s.disabled()), selector, uses,
                s.assignmentMode() == IPPoolSpec.AssignmentMode.Manual, selector(s.namespaceSelector()));
    }

    private static Selector selector(String s) {
        return s == null || s.isBlank() ? Selector.all() : Selector.parse(s);
    }

    boolean selectsAllNodes() {
        return nodeSelector.equals(Selector.all());
    }

    boolean selects(Map<String, String> nodeLabels) {
        return nodeSelector.matches(nodeLabels);
    }

    /**
     * {@return whether a workload of a namespace with these labels may use the pool} (Calico 3.29's
     * {@code namespaceSelector}). {@code null} labels (no namespace: not a Kubernetes pod, or its
     * namespace unknown) match only a pool that selects every namespace.
     */
    boolean selectsNamespace(Map<String, String> namespaceLabels) {
        if (namespaceSelector.equals(Selector.all())) {
            return true;
        }
        return namespaceLabels != null && namespaceSelector.matches(namespaceLabels);
    }

    /** {@return the block of this pool that holds {@code ip}}'s network, by the pool's block size. */
    Cidr blockFor(calico.api.net.IpAddress ip) {
        return new Cidr(ip.mask(blockSize), blockSize);
    }
}
