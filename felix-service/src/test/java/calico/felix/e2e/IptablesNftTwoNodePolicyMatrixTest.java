package calico.felix.e2e;

/**
 * The real-packet policy matrix ({@link PolicyMatrix}) on etcd with the iptables nft backend
 * (FELIX_IPTABLESBACKEND=NFT), its pods spread over two nodes with VXLAN between them
 * ({@link PodHosts#twoNodesVxlan}).
 */
class IptablesNftTwoNodePolicyMatrixTest extends EtcdPolicyMatrix {

    IptablesNftTwoNodePolicyMatrixTest() {
        super(Backend.IPTABLES_NFT, true);
    }
}
