package calico.node.startup.steps;

import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreException;
import java.security.SecureRandom;
import java.util.List;

/**
 * Calico's default IP pools: {@code default-ipv4-ippool} (and {@code default-ipv6-ippool}) are
 * created only when no pool of that IP version exists, so a pool the user made first (or a
 * second node's start-up) stops them; an existing pool is never changed. A pool whose CIDR
 * variable is unset gets {@link DefaultPoolCidrs}' choice.
 */
final class DefaultPools {

    static final String IPV4_NAME = "default-ipv4-ippool";
    static final String IPV6_NAME = "default-ipv6-ippool";

    private final Datastore datastore;
    private final DefaultPoolCidrs cidrs;

    DefaultPools(Datastore datastore, DefaultPoolCidrs cidrs) {
        this.datastore = datastore;
        this.cidrs = cidrs;
    }

    void ensure(PoolSettings v4, PoolSettings v6, boolean ipv6Supported, Changes changes) {
        if (!v4.enabled() && !v6.enabled()) {
            return;
        }
        List<Resource> pools = datastore.list(ResourceKind.IP_POOL).items();
        if (v4.enabled() && noPoolOf(4, pools)) {
            create(IPV4_NAME, v4.cidr().orElseGet(cidrs::ipv4), v4, v4.ipipMode(), changes);
        }
        if (v6.enabled() && ipv6Supported && noPoolOf(6, pools)) {
            create(IPV6_NAME, v6.cidr().orElseGet(cidrs::ipv6), v6, calico.api.model.EncapsulationMode.Never, changes);
        }
    }

    private void create(String name, Cidr cidr, PoolSettings s, calico.api.model.EncapsulationMode ipip,
                        Changes changes) {
        IPPool pool = new IPPool(ObjectMeta.named(name), new IPPoolSpec(cidr.toString(), s.vxlanMode(), ipip,
                s.natOutgoing(), null, s.disableBgpExport() ? Boolean.TRUE : null, s.blockSize(),
                s.nodeSelector().isEmpty() ? null : s.nodeSelector(), null, null, null));
        try {
            datastore.create(pool);
            changes.add("created IPPool " + name + " " + cidr + " (blockSize " + s.blockSize() + ", ipipMode " + ipip
                    + ", vxlanMode " + s.vxlanMode() + ", natOutgoing " + s.natOutgoing() + ")");
        } catch (DatastoreException.AlreadyExists raced) {
            // Another node's start-up created it first: as good.
        }
    }

    private static boolean noPoolOf(int version, List<Resource> pools) {
        return pools.stream().map(r -> ((IPPool) r).spec().cidr()).map(Cidr::tryParse)
                .noneMatch(c -> c.isPresent() && c.get().version() == version);
    }

    /** A random unique local /48 (RFC 4193), as Calico picks the default IPv6 pool. */
    static Cidr randomUla() {
        byte[] b = new byte[16];
        new SecureRandom().nextBytes(b);
        b[0] = (byte) 0xfd;
        for (int i = 6; i < 16; i++) {
            b[i] = 0;
        }
        return new Cidr(IpAddress.of(b), 48);
    }
}
