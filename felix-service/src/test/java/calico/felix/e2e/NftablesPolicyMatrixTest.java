package calico.felix.e2e;

/** The real-packet policy matrix ({@link PolicyMatrix}) on the nftables driver (FELIX_NFTABLESMODE=Enabled, FELIX_DATAPLANEDRIVERNAME=kernel); skipped until that driver is merged. */
class NftablesPolicyMatrixTest extends PolicyMatrix {

    NftablesPolicyMatrixTest() {
        super(Backend.NFTABLES);
    }
}
