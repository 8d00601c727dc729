package calico.felix.e2e;

/** The real-packet policy matrix ({@link PolicyMatrix}) on etcd with the eBPF driver (FELIX_BPFENABLED=true, a private bpffs per felix). */
class BpfPolicyMatrixTest extends EtcdPolicyMatrix {

    BpfPolicyMatrixTest() {
        super(Backend.BPF);
    }
}
