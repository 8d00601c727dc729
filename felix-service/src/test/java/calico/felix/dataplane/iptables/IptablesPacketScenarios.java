package calico.felix.dataplane.iptables;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.dataplane.iptables.IpVersion;
import calico.dataplane.iptables.Ipset;
import calico.dataplane.iptables.IptablesBackend;
import calico.dataplane.iptables.IptablesRestore;
import calico.dataplane.iptables.XtablesLockSettings;
import calico.dataplane.testing.NetNs;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.dataplane.PacketScenarios;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.Names;
import calico.felix.dataplane.rules.PolicyDriver.ApplyStats;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** The shared packet scenarios on the iptables driver, for one iptables backend ({@code ip netns exec} into the host). */
abstract class IptablesPacketScenarios extends PacketScenarios {

    abstract IptablesBackend backend();

    private String tool(IpVersion v) {
        return backend().restoreBinary(v).replace("-restore", "");
    }

    @Override
    protected void assumeAvailable() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        for (IpVersion v : IpVersion.values()) {
            assumeTrue(Files.isExecutable(Path.of("/usr/sbin/" + backend().restoreBinary(v))), "backend installed");
        }
    }

    @Override
    protected Driver driver() {
        List<String> prefix = List.of("ip", "netns", "exec", host.name());
        DataplaneModel model = new DataplaneModel();
        IptablesDataplane dp = new IptablesDataplane(new IptablesRestore(backend(), XtablesLockSettings.defaults(),
                prefix), new Ipset(prefix), model);
        return new Driver() {
            @Override
            public void kubeIpvs(boolean on) {
                model.kubeIpvs(on);
            }

            @Override
            public ApplyStats apply(List<DataplaneUpdate> batch) {
                model.apply(batch);
                return dp.apply(batch);
            }

            @Override
            public int refresh() {
                return dp.refresh();
            }

            @Override
            public ApplyStats resync() {
                return dp.resync();
            }

            @Override
            public void removeAll() {
                dp.removeAll();
            }
        };
    }

    @Override
    protected void strangerDrop(String chain, IpFamily family) {
        host.exec(tool(family == IpFamily.V6 ? IpVersion.V6 : IpVersion.V4), "-I", chain, "1", "-j", "DROP");
    }

    @Override
    protected void cutForwardHook() {
        host.exec(tool(IpVersion.V4), "-D", "FORWARD", "-j", Names.FORWARD);
    }

    @Override
    protected void emptySet(String name) {
        host.exec("ipset", "flush", name);
    }

    @Override
    protected String listSet(String name) {
        return host.exec("ipset", "list", name);
    }

    @Override
    protected String listOurs() {
        return host.exec(tool(IpVersion.V4) + "-save") + host.exec(tool(IpVersion.V6) + "-save");
    }

    @Override
    protected void dnat(boolean prerouting, String ip, int port, String toIp, int toPort) {
        host.exec(tool(IpVersion.V4), "-t", "nat", "-A", prerouting ? "PREROUTING" : "OUTPUT", "-p", "tcp", "-d", ip,
                "--dport",
                Integer.toString(port), "-j", "DNAT", "--to-destination", toIp + ":" + toPort);
    }

    @Override
    protected boolean kernelInputDrops(boolean drop) {
        host.exec(tool(IpVersion.V4), "-P", "INPUT", drop ? "DROP" : "ACCEPT");
        return true;
    }
}
