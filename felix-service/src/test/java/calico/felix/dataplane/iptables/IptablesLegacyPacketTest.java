package calico.felix.dataplane.iptables;

import calico.dataplane.iptables.IptablesBackend;

/** The shared packet scenarios on the iptables driver with the legacy (x_tables) backend. */
class IptablesLegacyPacketTest extends IptablesPacketScenarios {

    @Override
    IptablesBackend backend() {
        return IptablesBackend.LEGACY;
    }

    @Override
    protected String prefix() {
        return "ipl";
    }
}
