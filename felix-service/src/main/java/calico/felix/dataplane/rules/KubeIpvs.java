package calico.felix.dataplane.rules;

/**
 * Whether kube-proxy runs in IPVS mode, as Calico's felix tells: its {@code kube-ipvs0} interface exists in the
 * programmed namespace when felix starts. Only the iptables and nftables chains act on it (the eBPF driver renders
 * no INPUT or OUTPUT chains, as Calico ignores IPVS in eBPF mode).
 */
public final class KubeIpvs {

    private KubeIpvs() {
    }

    /** {@return whether IPVS support is on} given the names of the namespace's links */
    public static boolean detect(java.util.Collection<String> linkNames) {
        return linkNames.contains(Names.KUBE_IPVS_INTERFACE);
    }
}
