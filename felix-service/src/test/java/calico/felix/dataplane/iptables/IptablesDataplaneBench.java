package calico.felix.dataplane.iptables;

import calico.felix.dataplane.rules.*;
import calico.api.model.Action;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import calico.dataplane.iptables.Ipset;
import calico.dataplane.iptables.IptablesBackend;
import calico.dataplane.iptables.IptablesRestore;
import calico.dataplane.iptables.XtablesLockSettings;
import calico.dataplane.testing.NetNs;
import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.CompiledRule;
import calico.felix.calc.CompiledRule.Side;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.IpSetMember;
import calico.felix.calc.IpSetType;
import calico.felix.calc.PolicyId;
import calico.felix.calc.TierPolicies;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Prints the driver's apply times in a throwaway namespace, per backend: N endpoints, each with
 * its own policy (one allow rule from its own 20-member IP set, TCP port 80) and a shared
 * profile. Figures: the first apply (full resync), one policy changed, one set delta, and a
 * refresh with nothing to repair. Run:
 * {@code bench/run.sh felix-service calico.felix.dataplane.iptables.IptablesDataplaneBench}
 */
public final class IptablesDataplaneBench {

    public static void main(String[] args) {
        for (IptablesBackend backend : IptablesBackend.values()) {
          for (boolean v6 : new boolean[] {false, true}) {
            for (int n : new int[] {10, 100, 500}) {
                try (NetNs ns = NetNs.create("iptdpbench")) {
                    List<String> prefix = List.of("ip", "netns", "exec", ns.name());
                    IptablesDataplane dp = new IptablesDataplane(
                            new IptablesRestore(backend, XtablesLockSettings.defaults(), prefix), new Ipset(prefix));
                    List<DataplaneUpdate> batch = new ArrayList<>();
                    batch.add(new DataplaneUpdate.ConfigUpdate(java.util.Map.of("ipv6Support", Boolean.toString(v6))));
                    CompiledPolicy allowAll = new CompiledPolicy(List.of(allow("s:none", false)), List.of(), false);
                    batch.add(new DataplaneUpdate.ActiveProfileUpdate("kns.bench", allowAll));
                    for (int i = 0; i < n; i++) {
                        Set<IpSetMember> members = new HashSet<>();
                        for (int m = 0; m < 20; m++) {
                            members.add(IpSetMember.net(Cidr.parse("10." + (i / 256) + "." + (i % 256) + "." + m + "/32")));
                        }
                        batch.add(new DataplaneUpdate.IpSetUpdate("s:" + i, IpSetType.NET, members));
                        batch.add(new DataplaneUpdate.ActivePolicyUpdate(id(i),
                                new CompiledPolicy(List.of(allow("s:" + i, true)), List.of(), false)));
                        batch.add(new DataplaneUpdate.WorkloadEndpointUpdate("bench/w" + i, "calib" + i, null,
                                List.of("10.200." + (i / 256) + "." + (i % 256) + "/32"), List.of(), List.of("kns.bench"),
                                List.of(new TierPolicies("default", Action.Deny, List.of(id(i)), false)), List.of()));
                    }
                    batch.add(new DataplaneUpdate.IpSetUpdate("s:none", IpSetType.NET, Set.of()));
                    double full = time(() -> dp.apply(batch));
                    double policy = time(() -> dp.apply(List.of(new DataplaneUpdate.ActivePolicyUpdate(id(0),
                            new CompiledPolicy(List.of(), List.of(), false)))));
                    double set = time(() -> dp.apply(List.of(new DataplaneUpdate.IpSetDeltaUpdate("s:1",
                            Set.of(IpSetMember.net(Cidr.parse("10.99.0.1/32"))), Set.of()))));
                    double refresh = time(dp::refresh);
                    System.out.printf("%-6s %-5s endpoints=%-4d chains=%-5d first apply %7.1f ms  one policy %6.1f ms"
                                    + "  one set delta %6.1f ms  refresh (clean) %6.1f ms%n",
                            backend, v6 ? "v4+v6" : "v4", n, dp.programmed().chains(), full, policy, set, refresh);
                }
            }
          }
        }
    }

    private static PolicyId id(int i) {
        return new PolicyId("default", null, "p" + i, ResourceKind.GLOBAL_NETWORK_POLICY);
    }

    private static CompiledRule allow(String set, boolean port) {
        Side src = new Side(List.of(), List.of(), List.of(), List.of(), List.of(set), List.of(), List.of(), List.of());
        Side dst = port ? new Side(List.of(), List.of(), List.of("80"), List.of(), List.of(), List.of(), List.of(), List.of())
                : Side.ANY;
        return new CompiledRule(Action.Allow, null, port ? "TCP" : null, null, null, null, src, dst, null);
    }

    private static double time(Supplier<?> body) {
        long t0 = System.nanoTime();
        body.get();
        return (System.nanoTime() - t0) / 1e6;
    }
}
