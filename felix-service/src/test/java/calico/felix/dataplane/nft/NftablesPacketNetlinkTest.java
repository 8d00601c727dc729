package calico.felix.dataplane.nft;

/**
 * The shared packet scenarios on the nftables driver with the binding's netlink encoder on
 * ({@code Nftables.open(true)}): real packets through rules that reached the kernel as our own
 * netlink messages wherever the encoder covers the batch.
 */
class NftablesPacketNetlinkTest extends NftablesPacketTest {

    @Override
    protected String prefix() {
        return "nl";
    }

    @Override
    boolean netlink() {
        return true;
    }
}
