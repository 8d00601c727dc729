package calico.felix.e2e;

/**
 * The real-packet policy matrix ({@link PolicyMatrix}) on the kubernetes datastore with the
 * nftables driver, felix reading through a real typha that serves from the kube-apiserver
 * (felix itself opens no datastore connection).
 */
class NftablesKddThroughTyphaPolicyMatrixTest extends KddPolicyMatrix {

    NftablesKddThroughTyphaPolicyMatrixTest() {
        super(Backend.NFTABLES, true);
    }
}
