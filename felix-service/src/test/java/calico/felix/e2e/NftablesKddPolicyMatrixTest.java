package calico.felix.e2e;

/**
 * The real-packet policy matrix ({@link PolicyMatrix}) on the kubernetes datastore with the
 * nftables driver: felix reads a real kube-apiserver directly ({@code FELIX_DATASTORETYPE=kubernetes}).
 */
class NftablesKddPolicyMatrixTest extends KddPolicyMatrix {

    NftablesKddPolicyMatrixTest() {
        super(Backend.NFTABLES, false);
    }
}
