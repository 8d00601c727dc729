package calico.libcalico.ipam;

import calico.api.net.Cidr;
import java.math.BigInteger;
import java.util.List;

/**
 * Pool and block usage, as {@code calicoctl ipam show --show-blocks} prints it.
 *
 * @param pools        every IP pool (disabled ones too), in name order
 * @param orphanBlocks blocks inside no current pool (their pool was deleted while addresses were in use)
 */
public record IpamUsage(List<PoolUsage> pools, List<BlockUsage> orphanBlocks) {

    public IpamUsage {
        pools = List.copyOf(pools);
        orphanBlocks = List.copyOf(orphanBlocks);
    }

    /**
     * @param size  addresses in the pool
     * @param inUse addresses allocated in the pool's blocks
     */
    public record PoolUsage(String name, Cidr cidr, int blockSize, boolean disabled, BigInteger size, long inUse,
                            List<BlockUsage> blocks) {
        public PoolUsage {
            blocks = List.copyOf(blocks);
        }
    }

    /**
     * @param node  the node the block is affine to, or null
     * @param inUse allocated addresses
     */
    public record BlockUsage(Cidr cidr, String node, int size, int inUse) {
    }
}
