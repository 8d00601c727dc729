package calico.felix.dataplane.nft;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.dataplane.nft.Nftables;
import calico.dataplane.testing.NamespaceThread;
import calico.dataplane.testing.NetNs;
import calico.felix.dataplane.PacketScenarios;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.IpFamily;

/** The shared packet scenarios on the nftables driver (libnftables on a thread inside the host namespace). */
class NftablesPacketTest extends PacketScenarios {

    @Override
    protected void assumeAvailable() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
    }

    @Override
    protected String prefix() {
        return "nf";
    }

    /** Whether the libnftables context sends what the netlink encoder covers as our own messages. */
    boolean netlink() {
        return false;
    }

    @Override
    protected Driver driver() {
        NamespaceThread thread = new NamespaceThread(host);
        Nftables nft = thread.call(() -> Nftables.open(netlink()));
        DataplaneModel model = new DataplaneModel();
        NftablesDataplane dp = new NftablesDataplane(nft, model);
        return onThread(thread, model, dp, nft::close);
    }

    @Override
    protected void strangerDrop(String chain, IpFamily family) {
        host.exec("nft", "insert", "rule", "inet", "calico", chain, "meta", "nfproto",
                family == IpFamily.V6 ? "ipv6" : "ipv4", "drop");
    }

    @Override
    protected void cutForwardHook() {
        host.exec("nft", "flush", "chain", "inet", "calico", "filter-FORWARD");
    }

    @Override
    protected void emptySet(String name) {
        host.exec("nft", "flush", "set", "inet", "calico", name);
    }

    @Override
    protected String listSet(String name) {
        return host.exec("nft", "list", "set", "inet", "calico", name);
    }

    @Override
    protected String listOurs() {
        return host.tryExec("nft", "list", "table", "inet", "calico").output();
    }

    @Override
    protected void dnat(boolean prerouting, String ip, int port, String toIp, int toPort) {
        String hook = prerouting ? "prerouting" : "output";
        host.exec("nft", "add", "table", "ip", "hostdnat");
        host.exec("nft", "add", "chain", "ip", "hostdnat", hook, "{ type nat hook " + hook + " priority -100 ; }");
        host.exec("nft", "add", "rule", "ip", "hostdnat", hook, "ip", "daddr", ip, "tcp", "dport",
                Integer.toString(port), "dnat", "to", toIp + ":" + toPort);
    }

    @Override
    protected String settingsPrefix() {
        return "nftables";
    }
}
