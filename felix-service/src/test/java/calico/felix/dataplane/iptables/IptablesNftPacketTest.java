package calico.felix.dataplane.iptables;

import calico.dataplane.iptables.IptablesBackend;

/** The shared packet scenarios on the iptables driver with the iptables-nft backend. */
class IptablesNftPacketTest extends IptablesPacketScenarios {

    @Override
    IptablesBackend backend() {
        return IptablesBackend.NFT;
    }

    @Override
    protected String prefix() {
        return "ipn";
    }
}
