package calico.felix.e2e;

/** The real-packet policy matrix ({@link PolicyMatrix}) on the legacy iptables backend (FELIX_IPTABLESBACKEND=Legacy). */
class IptablesLegacyPolicyMatrixTest extends EtcdPolicyMatrix {

    IptablesLegacyPolicyMatrixTest() {
        super(Backend.IPTABLES_LEGACY);
    }
}
