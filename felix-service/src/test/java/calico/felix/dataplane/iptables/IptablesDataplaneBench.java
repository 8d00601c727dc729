package calico.felix.dataplane.iptables;

import static calico.felix.dataplane.testing.Fixtures.foldAndApply;

import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.IpFamily;
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
import calico.felix.calc.FelixSettings;
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
        if (args.length > 0 && args[0].equals("render")) {
            render();
            return;
        }
        if (args.length > 0 && args[0].equals("scale")) {
            for (IptablesBackend backend : IptablesBackend.values()) {
                scale(backend);
            }
            return;
        }
        for (IptablesBackend backend : IptablesBackend.values()) {
          for (boolean v6 : new boolean[] {false, true}) {
            for (int n : new int[] {10, 100, 500}) {
                try (NetNs ns = NetNs.create("iptdpbench")) {
                    List<String> prefix = List.of("ip", "netns", "exec", ns.name());
                    DataplaneModel model = new DataplaneModel();
                    IptablesDataplane dp = new IptablesDataplane(
                            new IptablesRestore(backend, XtablesLockSettings.defaults(), prefix), new Ipset(prefix), model);
                    List<DataplaneUpdate> batch = new ArrayList<>();
                    batch.add(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(java.util.Map.of("ipv6Support", Boolean.toString(v6)))));
                    // The set the profile names comes first: the model skips a profile naming an unknown set.
                    batch.add(new DataplaneUpdate.IpSetUpdate("s:none", IpSetType.NET, Set.of()));
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
                    double full = time(() -> foldAndApply(model, dp, batch));
                    double policy = time(() -> foldAndApply(model, dp, List.of(new DataplaneUpdate.ActivePolicyUpdate(id(0),
                            new CompiledPolicy(List.of(), List.of(), false)))));
                    double set = time(() -> foldAndApply(model, dp, List.of(new DataplaneUpdate.IpSetDeltaUpdate("s:1",
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

    /**
     * The scale at the driver: 500 endpoints, 2,000 policies of 5 rules (2 naming sets,
     * ports), every endpoint under 20 of them, IPv4 and IPv6. Prints the first apply, 20 single
     * policy changes (median and where the time goes), a set delta and a clean refresh.
     */
    private static void scale(IptablesBackend backend) {
        try (NetNs ns = NetNs.create("iptdpscale")) {
            List<String> prefix = List.of("ip", "netns", "exec", ns.name());
            DataplaneModel model = new DataplaneModel();
            IptablesDataplane dp = new IptablesDataplane(
                    new IptablesRestore(backend, XtablesLockSettings.defaults(), prefix), new Ipset(prefix), model);
            List<DataplaneUpdate> batch = scaleBatch();
            double full = time(() -> foldAndApply(model, dp, batch));
            int rules = dp.programmed().rules();
            double[] change = new double[20];
            double[][] parts = new double[4][20];
            for (int k = 0; k < 20; k++) {
                int p = (k * 97) % 2000;
                change[k] = time(() -> foldAndApply(model, dp, List.of(new DataplaneUpdate.ActivePolicyUpdate(id(p),
                        scalePolicy(p, 20000 + p)))));
                IptablesDataplane.Timings t = dp.lastTimings();
                parts[0][k] = t.renderMs();
                parts[1][k] = t.diffMs();
                parts[2][k] = t.ipsetMs();
                parts[3][k] = t.restoreMs();
            }
            double set = time(() -> foldAndApply(model, dp, List.of(new DataplaneUpdate.IpSetDeltaUpdate("s:1",
                    Set.of(IpSetMember.net(Cidr.parse("10.99.0.1/32"))), Set.of()))));
            double firstRefresh = time(dp::refresh);
            double refresh = time(dp::refresh);
            System.out.printf("%-6s scale: %d rules (both families), first apply %.0f ms; one policy change median %.1f ms "
                            + "(render %.1f, diff %.1f, ipset %.1f, restore %.1f); one set delta %.1f ms; "
                            + "refresh reading back %.0f ms, clean refresh %.0f ms%n", backend, rules, full,
                    median(change), median(parts[0]), median(parts[1]), median(parts[2]), median(parts[3]), set,
                    firstRefresh, refresh);
        }
    }

    /** No kernel: the scale model's incremental render (both families) after one policy change, 200 times. */
    private static void render() {
        DataplaneModel model = new DataplaneModel();
        scaleBatch().forEach(model::apply);
        double cold = time(() -> {
            ChainRenderer.render(model, IpFamily.V4);
            return ChainRenderer.render(model, IpFamily.V6);
        });
        ChainRenderer.Incremental r = new ChainRenderer.Incremental();
        double first = time(() -> {
            r.render(model, IpFamily.V4);
            return r.render(model, IpFamily.V6);
        });
        double[] t = new double[200];
        for (int k = 0; k < t.length; k++) {
            int p = (k * 97) % 2000;
            model.apply(new DataplaneUpdate.ActivePolicyUpdate(id(p), scalePolicy(p, 20000 + k)));
            t[k] = time(() -> {
                r.render(model, IpFamily.V4);
                return r.render(model, IpFamily.V6);
            });
        }
        double full = time(() -> {
            ChainRenderer.render(model, IpFamily.V4);
            return ChainRenderer.render(model, IpFamily.V6);
        });
        System.out.printf("render (v4+v6, scale model): full uncached cold %.0f ms, first incremental %.0f ms, full "
                + "uncached warm %.0f ms, after one policy change median %.1f ms (of %d)%n", cold, first, full, median(t),
                t.length);
    }

    private static double median(double[] xs) {
        double[] s = xs.clone();
        java.util.Arrays.sort(s);
        return s[s.length / 2];
    }

    /** The scale model: 200 sets of 30, 2,000 policies, 500 endpoints each under 20 policies both ways. */
    private static List<DataplaneUpdate> scaleBatch() {
        List<DataplaneUpdate> batch = new ArrayList<>();
        batch.add(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(java.util.Map.of())));
        batch.add(new DataplaneUpdate.IpSetUpdate("s:none", IpSetType.NET, Set.of())); // before the profile naming it
        CompiledPolicy allowAll = new CompiledPolicy(List.of(allow("s:none", false)), List.of(), false);
        batch.add(new DataplaneUpdate.ActiveProfileUpdate("kns.bench", allowAll));
        for (int s = 0; s < 200; s++) {
            Set<IpSetMember> members = new HashSet<>();
            for (int m = 0; m < 30; m++) {
                members.add(IpSetMember.net(Cidr.parse("10." + (s / 200) + "." + (s % 200) + "." + m + "/32")));
            }
            batch.add(new DataplaneUpdate.IpSetUpdate("s:" + s, IpSetType.NET, members));
        }
        for (int p = 0; p < 2000; p++) {
            batch.add(new DataplaneUpdate.ActivePolicyUpdate(id(p), scalePolicy(p, 80)));
        }
        for (int i = 0; i < 500; i++) {
            List<PolicyId> mine = new ArrayList<>();
            for (int p = i % 100; p < 2000; p += 100) {
                mine.add(id(p));
            }
            batch.add(new DataplaneUpdate.WorkloadEndpointUpdate("bench/w" + i, "calib" + i, null,
                    List.of("10.200." + (i / 256) + "." + (i % 256) + "/32"), List.of(), List.of("kns.bench"),
                    List.of(new TierPolicies("default", Action.Deny, mine, false)),
                    List.of(new TierPolicies("default", Action.Deny, mine, false))));
        }
        return batch;
    }

    /** Policy {@code p}: 5 inbound rules, two of them naming sets, one with {@code port}. */
    private static CompiledPolicy scalePolicy(int p, int port) {
        Side from = new Side(List.of(), List.of(), List.of(), List.of(), List.of("s:" + p % 200), List.of(), List.of(),
                List.of());
        Side from2 = new Side(List.of(), List.of(), List.of(), List.of(), List.of("s:" + (p + 7) % 200), List.of(),
                List.of(), List.of());
        Side onPort = new Side(List.of(), List.of(), List.of(Integer.toString(port), "3000:3100"), List.of(), List.of(),
                List.of(), List.of(), List.of());
        Side dns = new Side(List.of(), List.of(), List.of("53"), List.of(), List.of(), List.of(), List.of(), List.of());
        List<CompiledRule> in = List.of(
                new CompiledRule(Action.Allow, null, "TCP", null, null, null, from, onPort, null),
                new CompiledRule(Action.Allow, null, "UDP", null, null, null, from2, dns, null),
                new CompiledRule(Action.Allow, null, "TCP", null, null, null, Side.ANY, onPort, null));
        List<CompiledRule> out = List.of(new CompiledRule(Action.Allow, null, "TCP", null, null, null, Side.ANY, dns, null));
        return new CompiledPolicy(in, out, false);
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
