package calico.felix.e2e;

/** The real-packet policy matrix ({@link PolicyMatrix}) on the iptables nft backend (FELIX_IPTABLESBACKEND=NFT). */
class IptablesNftPolicyMatrixTest extends EtcdPolicyMatrix {

    IptablesNftPolicyMatrixTest() {
        super(Backend.IPTABLES_NFT);
    }
}
