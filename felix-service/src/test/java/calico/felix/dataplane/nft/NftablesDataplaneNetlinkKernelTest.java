package calico.felix.dataplane.nft;

/**
 * {@link NftablesDataplaneKernelTest} with the binding's netlink encoder on ({@code
 * Nftables.open(true)}): restart adoption, read-back and repair, held endpoint chains and the rest
 * hold the same when the batches the encoder covers reach the kernel as our messages.
 */
class NftablesDataplaneNetlinkKernelTest extends NftablesDataplaneKernelTest {

    @Override
    boolean netlink() {
        return true;
    }
}
