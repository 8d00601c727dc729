package calico.node.startup.steps;

import calico.api.model.EncapsulationMode;
import calico.api.net.Cidr;
import java.util.Optional;

/**
 * A default IP pool, created only when no pool of its IP version exists
 * ({@code CALICO_IPV4POOL_*} / {@code CALICO_IPV6POOL_*}).
 *
 * @param enabled          false when the CIDR variable is {@code none} (or {@code NO_DEFAULT_POOLS} is true)
 * @param cidr             the pool's CIDR; empty: Calico's default (192.168.0.0/16; a random ULA /48 for IPv6)
 * @param blockSize        20–32 (IPv4) or 116–128 (IPv6)
 * @param ipipMode         IPv4 only
 * @param vxlanMode        the pool's VXLAN mode
 * @param natOutgoing      Calico's default: true for IPv4, false for IPv6
 * @param nodeSelector     empty selects every node
 * @param disableBgpExport {@code CALICO_IPV4POOL_DISABLE_BGP_EXPORT}
 */
public record PoolSettings(boolean enabled, Optional<Cidr> cidr, int blockSize, EncapsulationMode ipipMode,
                           EncapsulationMode vxlanMode, boolean natOutgoing, String nodeSelector,
                           boolean disableBgpExport) {

    /** No default pool of this version. */
    public static PoolSettings disabled() {
        return new PoolSettings(false, Optional.empty(), 0, EncapsulationMode.Never, EncapsulationMode.Never, false,
                "", false);
    }
}
