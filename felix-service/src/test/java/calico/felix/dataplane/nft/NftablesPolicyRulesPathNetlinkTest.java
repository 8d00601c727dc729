package calico.felix.dataplane.nft;

/**
 * {@link NftablesPolicyRulesPathTest} with the binding's netlink encoder on ({@code
 * Nftables.open(true)}): policy chains' rewrites reach the kernel as our messages, and every
 * check there (programmed equals a full render, a refresh repairs nothing) holds the same.
 */
class NftablesPolicyRulesPathNetlinkTest extends NftablesPolicyRulesPathTest {

    @Override
    boolean netlink() {
        return true;
    }
}
