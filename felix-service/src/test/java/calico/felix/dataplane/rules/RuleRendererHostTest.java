package calico.felix.dataplane.rules;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.Action;
import calico.api.model.ResourceKind;
import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.PolicyId;
import calico.felix.calc.TierPolicies;
import calico.felix.dataplane.rules.GenericChain.Dispatch;
import calico.felix.dataplane.rules.GenericChain.Rules;
import calico.felix.dataplane.rules.Match.Dir;
import calico.felix.dataplane.rules.Ruleset.Entry;
import calico.felix.dataplane.rules.Ruleset.Hook;
import calico.felix.dataplane.rules.Ruleset.Table;
import calico.felix.calc.FelixSettings;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The neutral renderer's host-side chains: INPUT/OUTPUT hooks, host endpoints with failsafe
 * ports before policy, workload-to-host with each defaultEndpointToHostAction, the allow
 * action, NAT outgoing and its pool sets, and the IPv6-only rules.
 */
class RuleRendererHostTest {

    private static final Set<IpFamily> BOTH = Set.of(IpFamily.V4, IpFamily.V6);
    private static final PolicyId HP = new PolicyId("default", null, "host-guard", ResourceKind.GLOBAL_NETWORK_POLICY);

    private static DataplaneModel model(Map<String, String> config) {
        DataplaneModel m = new DataplaneModel();
        m.apply(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(config)));
        return m;
    }

    private static Rules rules(Ruleset rs, Table t, String name) {
        return (Rules) rs.chains(t).get(name);
    }

    private static DataplaneUpdate.HostEndpointUpdate hep(String iface, List<TierPolicies> in, List<TierPolicies> out,
                                                          String... profiles) {
        return new DataplaneUpdate.HostEndpointUpdate("node1/" + iface, iface, List.of("10.9.0.1"), List.of(),
                List.of(profiles), in, out);
    }

    @Test
    void kernelHooksEnterOurChainsInFilterAndNat() {
        Ruleset rs = RuleRenderer.render(new DataplaneModel(), BOTH);
        assertThat(rs.entries()).containsExactly(new Entry(Table.RAW, Hook.PREROUTING, Names.PREROUTING),
                new Entry(Table.RAW, Hook.OUTPUT, Names.OUTPUT), new Entry(Table.MANGLE, Hook.PREROUTING, Names.PREROUTING),
                new Entry(Table.MANGLE, Hook.POSTROUTING, Names.POSTROUTING),
                new Entry(Table.FILTER, Hook.FORWARD, Names.FORWARD),
                new Entry(Table.FILTER, Hook.INPUT, Names.INPUT), new Entry(Table.FILTER, Hook.OUTPUT, Names.OUTPUT),
                new Entry(Table.NAT, Hook.POSTROUTING, Names.POSTROUTING));
        MarkBits mb = MarkBits.defaults();
        assertThat(rules(rs, Table.FILTER, Names.INPUT).rules()).containsExactly(
                GenericRule.of(new Target.Goto(Names.WL_TO_HOST), new Match.Interface(true, "cali", true)),
                GenericRule.of(Target.ACCEPT, new Match.MarkAllSet(mb.accept()))
                        .withComment("untracked or pre-DNAT policy accepted the packet"),
                GenericRule.of(new Target.ClearMark(mb.all())),
                GenericRule.of(new Target.Jump(Names.FROM_HOST_DISPATCH)),
                GenericRule.of(Target.ACCEPT, new Match.MarkAllSet(mb.accept()))
                        .withComment("host endpoint policy accepted the packet"));
        // OUTPUT: raw's untracked accept first, host-to-workload unpoliced, DNAT'd traffic skips host endpoint egress.
        assertThat(rules(rs, Table.FILTER, Names.OUTPUT).rules()).containsExactly(
                GenericRule.of(Target.ACCEPT, new Match.MarkAllSet(mb.accept()))
                        .withComment("untracked policy accepted the packet"),
                GenericRule.of(Target.RETURN, new Match.Interface(false, "cali", true)),
                GenericRule.of(new Target.ClearMark(mb.all())),
                GenericRule.of(Target.RETURN, new Match.ConntrackDnat(false))
                        .withComment("DNAT'd: the outgoing interface is not known yet"),
                GenericRule.of(new Target.Jump(Names.TO_HOST_DISPATCH)),
                GenericRule.of(Target.ACCEPT, new Match.MarkAllSet(mb.accept()))
                        .withComment("host endpoint policy accepted the packet"));
        // No host endpoints: dispatch chains exist, send nowhere and return (null fallback).
        assertThat(rs.chains(Table.FILTER).get(Names.FROM_HOST_DISPATCH))
                .isEqualTo(new Dispatch(Names.FROM_HOST_DISPATCH, true, new java.util.TreeMap<>(), null));
    }

    @Test
    void hostEndpointChainsRunFailsafeBeforePolicyAndDenyWithoutPolicy() {
        DataplaneModel m = new DataplaneModel();
        m.apply(new DataplaneUpdate.ActivePolicyUpdate(HP, new CompiledPolicy(List.of(), List.of(), false)));
        m.apply(hep("eth0", List.of(new TierPolicies("default", Action.Deny, List.of(HP), false)), List.of()));
        m.apply(hep("eth1", List.of(), List.of()));
        Ruleset rs = RuleRenderer.render(m, Set.of(IpFamily.V4));

        Dispatch from = (Dispatch) rs.chains(Table.FILTER).get(Names.FROM_HOST_DISPATCH);
        assertThat(from.in()).isTrue();
        assertThat(from.targets()).containsExactly(Map.entry("eth0", "cali-fh-eth0"), Map.entry("eth1", "cali-fh-eth1"));
        assertThat(from.fallback()).isNull();
        Dispatch to = (Dispatch) rs.chains(Table.FILTER).get(Names.TO_HOST_DISPATCH);
        assertThat(to.in()).isFalse();
        assertThat(to.targets()).containsEntry("eth0", "cali-th-eth0");

        List<GenericRule> fh = rules(rs, Table.FILTER, "cali-fh-eth0").rules();
        int failsafe = fh.indexOf(GenericRule.of(new Target.Jump(Names.FAILSAFE_IN)));
        int policy = fh.indexOf(GenericRule.of(new Target.Jump(Names.policyInbound(HP)),
                new Match.MarkAllClear(MarkBits.defaults().both())));
        assertThat(failsafe).as("failsafe jump").isPositive();
        assertThat(policy).as("ingress policy jump (pi chain)").isGreaterThan(failsafe);
        assertThat(fh.get(fh.size() - 1).target()).isEqualTo(Target.DROP);
        assertThat(rules(rs, Table.FILTER, "cali-th-eth0").rules())
                .contains(GenericRule.of(new Target.Jump(Names.FAILSAFE_OUT)))
                .noneMatch(r -> r.target() instanceof Target.Jump j && j.chain().startsWith("cali-p"));

        // No policy and no profile: conntrack, failsafe, then default deny.
        assertThat(rules(rs, Table.FILTER, "cali-th-eth1").rules()).extracting(GenericRule::target).containsExactly(
                new Target.ClearMark(MarkBits.defaults().both()), Target.ACCEPT, Target.DROP,
                new Target.Jump(Names.FAILSAFE_OUT), Target.DROP);
    }

    @Test
    void failsafeChainsFollowConfigAndKeepNetsInTheirFamily() {
        DataplaneModel m = model(Map.of("failsafeInboundHostPorts", "tcp:22,udp:10.0.0.0/8:68,tcp:[fd00::/64]:8022",
                "failsafeOutboundHostPorts", "udp:53"));
        Ruleset v4 = RuleRenderer.render(m, Set.of(IpFamily.V4));
        assertThat(rules(v4, Table.FILTER, Names.FAILSAFE_IN).rules()).containsExactly(
                new GenericRule(List.of(new Match.Protocol("tcp", false), new Match.Ports(Dir.DST, List.of("22"), false)),
                        Target.ACCEPT, "failsafe tcp:22"),
                new GenericRule(List.of(new Match.Family(IpFamily.V4), new Match.Protocol("udp", false),
                        new Match.Nets(Dir.SRC, List.of("10.0.0.0/8"), false),
                        new Match.Ports(Dir.DST, List.of("68"), false)), Target.ACCEPT, "failsafe udp:68"));
        Ruleset both = RuleRenderer.render(m, BOTH);
        assertThat(rules(both, Table.FILTER, Names.FAILSAFE_IN).rules()).hasSize(3);
        assertThat(rules(both, Table.FILTER, Names.FAILSAFE_OUT).rules()).containsExactly(
                new GenericRule(List.of(new Match.Protocol("udp", false), new Match.Ports(Dir.DST, List.of("53"), false)),
                        Target.ACCEPT, "failsafe udp:53"));
        // Calico's defaults when nothing is configured: ssh among them.
        assertThat(rules(RuleRenderer.render(new DataplaneModel(), BOTH), Table.FILTER, Names.FAILSAFE_IN).rules())
                .extracting(GenericRule::comment).contains("failsafe tcp:22", "failsafe udp:68", "failsafe tcp:6443");
    }

    @Test
    void workloadToHostAppliesEgressPolicyThenTheConfiguredAction() {
        for (var c : List.of(
                Map.entry(Map.<String, String>of(), Target.DROP),
                Map.entry(Map.of("defaultEndpointToHostAction", "Return"), Target.RETURN),
                Map.entry(Map.of("defaultEndpointToHostAction", "Accept"), Target.ACCEPT),
                Map.entry(Map.of("defaultEndpointToHostAction", "Accept", "iptablesFilterAllowAction", "Return"),
                        Target.RETURN))) {
            List<GenericRule> r = rules(RuleRenderer.render(model(c.getKey()), Set.of(IpFamily.V4)), Table.FILTER,
                    Names.WL_TO_HOST).rules();
            assertThat(r).as(c.getKey().toString()).containsExactly(
                    GenericRule.of(new Target.Jump(Names.FROM_WL_DISPATCH)),
                    GenericRule.of(c.getValue()).withComment("defaultEndpointToHostAction"));
        }
    }

    @Test
    void ipv6AllowsNeighbourDiscoveryToTheHostBeforeEgressPolicy() {
        List<GenericRule> r = rules(RuleRenderer.render(new DataplaneModel(), BOTH), Table.FILTER, Names.WL_TO_HOST)
                .rules();
        assertThat(r).hasSize(8);
        assertThat(r.subList(0, 6)).extracting(g -> ((Match.Icmp) g.matches().get(2)).type())
                .containsExactly(130, 131, 132, 133, 135, 136);
        assertThat(r.subList(0, 6)).allMatch(g -> g.matches().get(0).equals(new Match.Family(IpFamily.V6))
                && g.matches().get(1).equals(new Match.Protocol("ipv6-icmp", false)) && g.target() == Target.ACCEPT);
        assertThat(r.get(6)).isEqualTo(GenericRule.of(new Target.Jump(Names.FROM_WL_DISPATCH)));
        assertThat(rules(RuleRenderer.render(new DataplaneModel(), Set.of(IpFamily.V6)), Table.FILTER,
                Names.WL_TO_HOST).rules()).hasSize(8);
    }

    @Test
    void allowActionReturnAppliesWhereCalicoUsesIt() {
        Ruleset rs = RuleRenderer.render(model(Map.of("iptablesFilterAllowAction", "Return")), Set.of(IpFamily.V4));
        long accept = MarkBits.defaults().accept();
        for (String chain : List.of(Names.FORWARD, Names.INPUT, Names.OUTPUT)) {
            List<GenericRule> all = rules(rs, Table.FILTER, chain).rules();
            // FORWARD ends by marking what it did not accept as forwarded (for mangle POSTROUTING).
            List<GenericRule> r = chain.equals(Names.FORWARD) ? all.subList(0, all.size() - 1) : all;
            assertThat(r.get(r.size() - 1).target()).as(chain).isEqualTo(Target.RETURN);
            assertThat(r.get(r.size() - 1).matches()).containsExactly(new Match.MarkAllSet(accept));
        }
        // Failsafe stays ACCEPT: a RETURN would fall back into the endpoint's policy.
        assertThat(rules(rs, Table.FILTER, Names.FAILSAFE_IN).rules()).allMatch(g -> g.target() == Target.ACCEPT);
        Ruleset plain = RuleRenderer.render(new DataplaneModel(), Set.of(IpFamily.V4));
        assertThat(rules(plain, Table.FILTER, Names.FORWARD).rules().get(5).target()).isEqualTo(Target.ACCEPT);
    }

    @Test
    void natOutgoingMasqueradesPoolTrafficLeavingThePoolsPerFamily() {
        DataplaneModel none = new DataplaneModel();
        Ruleset empty = RuleRenderer.render(none, BOTH);
        assertThat(empty.driverSets()).isEmpty();
        assertThat(rules(empty, Table.NAT, Names.NAT_OUTGOING).rules()).isEmpty();
        assertThat(rules(empty, Table.NAT, Names.POSTROUTING).rules())
                .containsExactly(GenericRule.of(new Target.Jump(Names.NAT_OUTGOING)));

        DataplaneModel m = new DataplaneModel();
        m.apply(new DataplaneUpdate.IpPoolUpdate("p1", "10.65.0.0/16", true, "Never", "Never", false));
        m.apply(new DataplaneUpdate.IpPoolUpdate("p2", "10.66.0.0/16", false, "Never", "Never", false));
        m.apply(new DataplaneUpdate.IpPoolUpdate("old", "10.67.0.0/16", true, "Never", "Never", true));
        m.apply(new DataplaneUpdate.IpPoolUpdate("v6", "fd00:65::/64", false, "Never", "Never", false));
        Ruleset rs = RuleRenderer.render(m, BOTH);
        // Disabled pools still hold workloads: they count for both sets, as in Calico.
        assertThat(rs.driverSets()).containsExactly(
                Map.entry(Names.ALL_POOLS_SET, Set.of("10.65.0.0/16", "10.66.0.0/16", "10.67.0.0/16", "fd00:65::/64")),
                Map.entry(Names.MASQ_POOLS_SET, Set.of("10.65.0.0/16", "10.67.0.0/16")));
        assertThat(rules(rs, Table.NAT, Names.NAT_OUTGOING).rules()).containsExactly(
                GenericRule.of(new Target.Masquerade(0, 0, true), new Match.Family(IpFamily.V4),
                        new Match.InSet(Dir.SRC, IpFamily.V4, Names.MASQ_POOLS_SET, false),
                        new Match.InSet(Dir.DST, IpFamily.V4, Names.ALL_POOLS_SET, true)).withComment("natOutgoing"));
        // The sets reach the kernel per family under Calico's names.
        var plan = SetPlan.of(m, rs);
        assertThat(plan.get("cali40all-ipam-pools").members()).hasSize(3);
        assertThat(plan.get("cali60all-ipam-pools").members()).hasSize(1);
        assertThat(plan.get("cali60masq-ipam-pools").members()).isEmpty();

        m.apply(new DataplaneUpdate.IpPoolRemove("p1"));
        m.apply(new DataplaneUpdate.IpPoolRemove("old"));
        assertThat(rules(RuleRenderer.render(m, BOTH), Table.NAT, Names.NAT_OUTGOING).rules()).isEmpty();
    }

    /**
     * natPortRange: TCP and UDP masquerade into the range and return, the rest without one (Calico's
     * five rules); IPPoolsAndHostIPs: the hosts' set is excluded too, and exists without any encapsulation.
     */
    @Test
    void natPortRangeAndHostExclusionShapeTheNatOutgoingChain() {
        DataplaneModel m = model(Map.of("natPortRange", "32768:33000", "natOutgoingExclusions", "IPPoolsAndHostIPs"));
        m.apply(new DataplaneUpdate.IpPoolUpdate("p1", "10.65.0.0/16", true, "Never", "Never", false));
        m.apply(new DataplaneUpdate.IpPoolUpdate("v6", "fd00:65::/64", true, "Never", "Never", false));
        m.apply(new DataplaneUpdate.HostMetadataUpdate("node2", "192.168.7.2", "fd00:7::2", Map.of()));
        assertThat(m.settings().natOutgoing()).isEqualTo(new NatOutgoing(true, 32768, 33000));
        Ruleset rs = RuleRenderer.render(m, BOTH);
        assertThat(rs.driverSets().get(Names.ALL_HOSTS_SET)).as("hosts' set without encapsulation")
                .containsExactlyInAnyOrder("192.168.7.2/32", "fd00:7::2/128");
        List<GenericRule> expected = new java.util.ArrayList<>();
        for (IpFamily f : List.of(IpFamily.V4, IpFamily.V6)) {
            List<Match> leaving = List.of(new Match.Family(f), new Match.InSet(Dir.SRC, f, Names.MASQ_POOLS_SET, false),
                    new Match.InSet(Dir.DST, f, Names.ALL_POOLS_SET, true),
                    new Match.InSet(Dir.DST, f, Names.ALL_HOSTS_SET, true));
            for (String proto : List.of("tcp", "udp")) {
                List<Match> p = new java.util.ArrayList<>(leaving);
                p.add(new Match.Protocol(proto, false));
                expected.add(new GenericRule(p, new Target.Masquerade(32768, 33000, true), "natOutgoing"));
                expected.add(new GenericRule(p, Target.RETURN, "natOutgoing"));
            }
            expected.add(new GenericRule(leaving, new Target.Masquerade(0, 0, true), "natOutgoing"));
        }
        assertThat(rules(rs, Table.NAT, Names.NAT_OUTGOING).rules()).containsExactlyElementsOf(expected);

        // Defaults: no hosts' set (no encapsulation), one rule per family, no ports.
        DataplaneModel d = model(Map.of());
        d.apply(new DataplaneUpdate.IpPoolUpdate("p1", "10.65.0.0/16", true, "Never", "Never", false));
        d.apply(new DataplaneUpdate.HostMetadataUpdate("node2", "192.168.7.2", null, Map.of()));
        Ruleset plain = RuleRenderer.render(d, BOTH);
        assertThat(plain.driverSets()).doesNotContainKey(Names.ALL_HOSTS_SET);
        assertThat(rules(plain, Table.NAT, Names.NAT_OUTGOING).rules()).singleElement()
                .satisfies(r -> assertThat(r.target()).isEqualTo(new Target.Masquerade(0, 0, true)));
        // A range whose upper end is 0 is "unset", as in Calico.
        assertThat(model(Map.of("natPortRange", "0:0")).settings().natOutgoing()).isEqualTo(NatOutgoing.DEFAULT);
        assertThat(model(Map.of("natPortRange", "2000")).settings().natOutgoing())
                .isEqualTo(new NatOutgoing(false, 2000, 2000));
    }

    @Test
    void settingsComeFromTheConfigUpdate() {
        Map<String, String> c = new HashMap<>();
        c.put("chainInsertMode", "Append");
        c.put("ipv6Support", "false");
        c.put("defaultEndpointToHostAction", "Accept");
        RuleSettings s = model(c).settings();
        assertThat(s.appendMode()).isTrue();
        assertThat(s.ipv6Support()).isFalse();
        assertThat(s.endpointToHostAction()).isEqualTo(RuleSettings.EndpointToHostAction.ACCEPT);
        RuleSettings d = new DataplaneModel().settings();
        assertThat(d.appendMode()).isFalse();
        assertThat(d.ipv6Support()).isTrue();
        assertThat(d.endpointToHostAction()).isEqualTo(RuleSettings.EndpointToHostAction.DROP);
        assertThat(d.allowTarget()).isEqualTo(Target.ACCEPT);
    }
}
