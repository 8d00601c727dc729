package calico.felix.e2e;

/**
 * The real-packet policy matrix ({@link PolicyMatrix}) on the kubernetes datastore with the
 * nftables driver, its pods spread over two nodes with VXLAN between them ({@link PodHosts#twoNodesVxlan}).
 */
class NftablesKddTwoNodePolicyMatrixTest extends KddPolicyMatrix {

    NftablesKddTwoNodePolicyMatrixTest() {
        super(Backend.NFTABLES, false, true);
    }
}
