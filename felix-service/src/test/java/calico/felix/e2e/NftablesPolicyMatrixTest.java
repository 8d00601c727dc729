package calico.felix.e2e;

/** The real-packet policy matrix ({@link PolicyMatrix}) on etcd with the nftables driver (FELIX_NFTABLESMODE=Enabled, FELIX_DATAPLANEDRIVERNAME=kernel). */
class NftablesPolicyMatrixTest extends EtcdPolicyMatrix {

    NftablesPolicyMatrixTest() {
        super(Backend.NFTABLES);
    }
}
