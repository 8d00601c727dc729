package calico.dataplane.bpf;

/** Which tc hook of an interface (its {@code clsact} qdisc): packets the interface receives or sends. */
public enum TcDirection {
    INGRESS(LibBpf.BPF_TC_INGRESS),
    EGRESS(LibBpf.BPF_TC_EGRESS);

    final int attachPoint;

    TcDirection(int attachPoint) {
        this.attachPoint = attachPoint;
    }
}
