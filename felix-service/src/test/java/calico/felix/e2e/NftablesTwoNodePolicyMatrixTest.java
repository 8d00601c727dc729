package calico.felix.e2e;

/**
 * The real-packet policy matrix ({@link PolicyMatrix}) on etcd with the nftables driver, its pods
 * spread over two nodes with VXLAN between them ({@link PodHosts#twoNodesVxlan}): prod's pods on
 * one node, dev's on the other, one felix each.
 */
class NftablesTwoNodePolicyMatrixTest extends EtcdPolicyMatrix {

    NftablesTwoNodePolicyMatrixTest() {
        super(Backend.NFTABLES, true);
    }
}
