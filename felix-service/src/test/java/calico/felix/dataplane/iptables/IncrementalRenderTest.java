package calico.felix.dataplane.iptables;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.Action;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import calico.dataplane.iptables.Table;
import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.CompiledRule;
import calico.felix.calc.CompiledRule.Side;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.IpSetMember;
import calico.felix.calc.IpSetType;
import calico.felix.calc.PolicyId;
import calico.felix.calc.TierPolicies;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.Names;
import calico.felix.dataplane.rules.RenderCache;
import calico.felix.dataplane.rules.RuleRenderer;
import calico.felix.calc.FelixSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The incremental renderers give exactly what a full render of the same model gives, through a
 * random stream of policy, profile, endpoint, set, pool and config updates; and a chain whose
 * inputs did not change comes back as the same instance (what the driver's cheap diff relies on).
 */
class IncrementalRenderTest {

    private static PolicyId id(int i) {
        return new PolicyId("default", null, "p" + i, ResourceKind.GLOBAL_NETWORK_POLICY);
    }

    private static CompiledPolicy policy(Random r) {
        List<CompiledRule> in = new ArrayList<>();
        int n = r.nextInt(4);
        for (int i = 0; i < n; i++) {
            Side src = r.nextBoolean() ? Side.ANY : new Side(List.of(r.nextBoolean() ? "10.1.0.0/16" : "fd00::/64"),
                    List.of(), List.of(), List.of(), List.of("s:" + r.nextInt(5)), List.of(), List.of(), List.of());
            Side dst = new Side(List.of(), List.of(), List.of(Integer.toString(1 + r.nextInt(1000))), List.of(),
                    List.of(), List.of(), List.of(), List.of());
            Action a = r.nextInt(5) == 0 ? Action.Deny : r.nextInt(5) == 0 ? Action.Pass : Action.Allow;
            in.add(new CompiledRule(a, null, "TCP", null, null, null, src, dst, null));
        }
        return new CompiledPolicy(in, List.of(new CompiledRule(Action.Allow, null, null, null, null, null, Side.ANY,
                Side.ANY, null)), false);
    }

    private static DataplaneUpdate randomUpdate(Random r) {
        int p = r.nextInt(12);
        return switch (r.nextInt(9)) {
            case 0, 1 -> new DataplaneUpdate.ActivePolicyUpdate(id(p), policy(r));
            case 2 -> new DataplaneUpdate.ActivePolicyRemove(id(p));
            case 3 -> new DataplaneUpdate.ActiveProfileUpdate("prof" + r.nextInt(3), policy(r));
            case 4, 5 -> {
                List<PolicyId> in = new ArrayList<>();
                List<PolicyId> out = new ArrayList<>();
                for (int k = 0; k < 3; k++) {
                    in.add(id(r.nextInt(12)));
                    out.add(id(r.nextInt(12)));
                }
                int w = r.nextInt(6);
                yield new DataplaneUpdate.WorkloadEndpointUpdate("ns/w" + w, "cali" + w, null,
                        List.of("10.0.0." + w + "/32"), List.of(), List.of("prof" + r.nextInt(3)),
                        List.of(new TierPolicies("default", Action.Deny, in, false)),
                        List.of(new TierPolicies("default", r.nextBoolean() ? Action.Deny : Action.Pass, out, false)));
            }
            case 6 -> new DataplaneUpdate.WorkloadEndpointRemove("ns/w" + r.nextInt(6));
            case 7 -> new DataplaneUpdate.IpSetUpdate("s:" + r.nextInt(5), IpSetType.NET,
                    Set.of(IpSetMember.net(Cidr.parse("10.9.0." + r.nextInt(200) + "/32"))));
            default -> r.nextInt(4) == 0
                    ? new DataplaneUpdate.ConfigUpdate(FelixSettings.from(Map.of("iptablesFilterAllowAction",
                            r.nextBoolean() ? "Return" : "Accept")))
                    : new DataplaneUpdate.IpPoolUpdate("pool", "10.0.0.0/16", r.nextBoolean(), null, null, false);
        };
    }

    @Test
    void incrementalRendersEqualFullRendersThroughRandomUpdates() {
        for (long seed = 1; seed <= 20; seed++) {
            Random r = new Random(seed);
            DataplaneModel model = new DataplaneModel();
            RenderCache neutral = new RenderCache();
            ChainRenderer.Incremental iptables = new ChainRenderer.Incremental();
            for (int step = 0; step < 60; step++) {
                int n = 1 + r.nextInt(3);
                for (int k = 0; k < n; k++) {
                    model.apply(randomUpdate(r));
                }
                Set<IpFamily> both = Set.of(IpFamily.V4, IpFamily.V6);
                assertThat(RuleRenderer.render(model, both, neutral)).as("seed %d step %d", seed, step)
                        .isEqualTo(RuleRenderer.render(model, both));
                for (IpFamily f : IpFamily.values()) {
                    ChainRenderer.Rendered inc = iptables.render(model, f);
                    ChainRenderer.Rendered full = ChainRenderer.render(model, f);
                    assertThat(inc.tables()).as("seed %d step %d %s", seed, step, f).isEqualTo(full.tables());
                    assertThat(inc.netSets()).isEqualTo(full.netSets());
                    assertThat(inc.ruleset()).isEqualTo(full.ruleset());
                }
            }
        }
    }

    @Test
    void unchangedChainsComeBackAsTheSameInstances() {
        DataplaneModel model = new DataplaneModel();
        CompiledPolicy p = new CompiledPolicy(List.of(), List.of(), false);
        model.apply(new DataplaneUpdate.ActivePolicyUpdate(id(1), p));
        model.apply(new DataplaneUpdate.ActivePolicyUpdate(id(2), p));
        model.apply(new DataplaneUpdate.WorkloadEndpointUpdate("ns/w", "caliw", null, List.of("10.0.0.1/32"),
                List.of(), List.of(), List.of(new TierPolicies("default", Action.Deny, List.of(id(1), id(3)), false)),
                List.of()));
        ChainRenderer.Incremental r = new ChainRenderer.Incremental();
        Map<String, Chain> before = r.render(model, IpFamily.V4).chains(Table.FILTER);

        // Policy 2 changes (an equal but new object): its chains are new; all others are the same instances.
        model.apply(new DataplaneUpdate.ActivePolicyUpdate(id(2), new CompiledPolicy(List.of(), List.of(), false)));
        Map<String, Chain> after = r.render(model, IpFamily.V4).chains(Table.FILTER);
        assertThat(after).isEqualTo(before);
        Set<String> p2 = Set.of(Names.policyInbound(id(2)), Names.policyOutbound(id(2)));
        after.forEach((name, c) -> assertThat(c == before.get(name)).as(name).isEqualTo(!p2.contains(name)));

        // Policy 3, which the endpoint lists, appears: the endpoint's chain is rendered again (no DROP for it).
        model.apply(new DataplaneUpdate.ActivePolicyUpdate(id(3), p));
        Map<String, Chain> third = r.render(model, IpFamily.V4).chains(Table.FILTER);
        assertThat(third.get("cali-tw-caliw")).isNotEqualTo(after.get("cali-tw-caliw"))
                .isEqualTo(ChainRenderer.render(model, IpFamily.V4).chains().get("cali-tw-caliw"));
    }

    @Test
    void endpointsAlikeShareOneListOfRulesAndOthersDoNot() {
        DataplaneModel model = new DataplaneModel();
        CompiledPolicy p = new CompiledPolicy(List.of(), List.of(), false);
        model.apply(new DataplaneUpdate.ActivePolicyUpdate(id(1), p));
        model.apply(new DataplaneUpdate.ActiveProfileUpdate("prof", p));
        List<TierPolicies> one = List.of(new TierPolicies("default", Action.Deny, List.of(id(1), id(2)), false));
        for (String w : List.of("a", "b")) {
            model.apply(new DataplaneUpdate.WorkloadEndpointUpdate("ns/" + w, "cali" + w, null,
                    List.of("10.0.0.1/32"), List.of(), List.of("prof"), one, one));
        }
        model.apply(new DataplaneUpdate.WorkloadEndpointUpdate("ns/c", "calic", null, List.of("10.0.0.3/32"),
                List.of(), List.of(), one, one));
        RenderCache cache = new RenderCache();
        Set<IpFamily> both = Set.of(IpFamily.V4, IpFamily.V6);
        var filter = RuleRenderer.render(model, both, cache).chains().get(calico.felix.dataplane.rules.Ruleset.Table.FILTER);
        assertThat(rules(filter, "cali-tw-calia")).isSameAs(rules(filter, "cali-tw-calib"))
                .isNotSameAs(rules(filter, "cali-tw-calic")) // no profile
                .isNotSameAs(rules(filter, "cali-fw-calia")); // the other direction

        // Policy 2 appears: both are rendered again (no DROP for it), still one list, and equal to a full render.
        model.apply(new DataplaneUpdate.ActivePolicyUpdate(id(2), p));
        var again = RuleRenderer.render(model, both, cache).chains().get(calico.felix.dataplane.rules.Ruleset.Table.FILTER);
        assertThat(rules(again, "cali-tw-calia")).isSameAs(rules(again, "cali-tw-calib"))
                .isNotEqualTo(rules(filter, "cali-tw-calia"))
                .isEqualTo(rules(RuleRenderer.render(model, both).chains()
                        .get(calico.felix.dataplane.rules.Ruleset.Table.FILTER), "cali-tw-calib"));
    }

    private static List<calico.felix.dataplane.rules.GenericRule> rules(
            java.util.SortedMap<String, calico.felix.dataplane.rules.GenericChain> chains, String name) {
        return ((calico.felix.dataplane.rules.GenericChain.Rules) chains.get(name)).rules();
    }
}
