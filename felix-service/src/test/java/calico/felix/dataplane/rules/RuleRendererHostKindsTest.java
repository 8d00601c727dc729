package calico.felix.dataplane.rules;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.Action;
import calico.api.model.ResourceKind;
import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.CompiledRule;
import calico.felix.calc.CompiledRule.Side;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.DataplaneUpdate.HostEndpointUpdate;
import calico.felix.calc.PolicyId;
import calico.felix.calc.TierPolicies;
import calico.felix.dataplane.iptables.IptablesFormatter;
import calico.felix.dataplane.nft.NftRuleFormatter;
import calico.felix.dataplane.rules.GenericChain.Dispatch;
import calico.felix.dataplane.rules.GenericChain.Rules;
import calico.felix.dataplane.rules.Ruleset.Table;
import calico.felix.calc.FelixSettings;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Host endpoint policy kinds as Calico renders them (untracked in raw, pre-DNAT in mangle,
 * applyOnForward in the filter forward chains, the all-interfaces endpoint), the deny action,
 * raw anti-spoofing, and how both formatters say the new matches and targets.
 */
class RuleRendererHostKindsTest {

    private static final Set<IpFamily> V4 = Set.of(IpFamily.V4);
    private static final MarkBits MB = MarkBits.defaults();
    private static final PolicyId P = new PolicyId("default", null, "p", ResourceKind.GLOBAL_NETWORK_POLICY);
    private static final CompiledPolicy DENY_IN = new CompiledPolicy(List.of(new CompiledRule(Action.Deny, null, null,
            null, null, null, Side.ANY, Side.ANY, null)), List.of(), false);

    private static List<TierPolicies> tier(PolicyId... ids) {
        return List.of(new TierPolicies("default", Action.Deny, List.of(ids), false));
    }

    private static DataplaneModel model(Map<String, String> config, DataplaneUpdate... updates) {
        DataplaneModel m = new DataplaneModel();
        m.apply(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(new HashMap<>(config))));
        for (DataplaneUpdate u : updates) {
            m.apply(u);
        }
        return m;
    }

    private static List<GenericRule> rules(Ruleset rs, Table t, String name) {
        assertThat(rs.chains(t)).as(t + " " + name).containsKey(name);
        return ((Rules) rs.chains(t).get(name)).rules();
    }

    private static HostEndpointUpdate hep(String iface, List<TierPolicies> untrackedIn, List<TierPolicies> preDnat,
                                          List<TierPolicies> forwardIn) {
        return new HostEndpointUpdate("n/" + iface, iface, List.of(), List.of(), List.of(), List.of(), List.of(),
                untrackedIn, List.of(), preDnat, forwardIn, List.of());
    }

    @Test
    void untrackedPolicyRendersIntoRawWithoutConntrackAndUntracksWhatItAllows() {
        Ruleset rs = RuleRenderer.render(model(Map.of(), new DataplaneUpdate.ActivePolicyUpdate(P, DENY_IN),
                hep("eth0", tier(P), List.of(), List.of())), V4);
        assertThat(rs.entries()).contains(new Ruleset.Entry(Table.RAW, Ruleset.Hook.PREROUTING, Names.PREROUTING),
                new Ruleset.Entry(Table.RAW, Ruleset.Hook.OUTPUT, Names.OUTPUT));
        assertThat(((Dispatch) rs.chains(Table.RAW).get(Names.FROM_HOST_DISPATCH)).targets())
                .containsExactly(Map.entry("eth0", Names.fromHostEndpoint("eth0")));
        List<GenericRule> fh = rules(rs, Table.RAW, Names.fromHostEndpoint("eth0"));
        assertThat(fh).noneMatch(r -> r.matches().stream().anyMatch(m -> m instanceof Match.Conntrack));
        assertThat(fh).containsSubsequence(GenericRule.of(new Target.Jump(Names.FAILSAFE_IN)),
                GenericRule.of(new Target.Jump(Names.policyInbound(P)), new Match.MarkAllClear(MB.pass())),
                GenericRule.of(new Target.NoTrack(), new Match.MarkAllSet(MB.accept())).withComment("untracked allow"),
                GenericRule.of(Target.RETURN, new Match.MarkAllSet(MB.accept())));
        // No verdict falls through to the filter table: no end-of-tier deny, no profiles, no final deny.
        assertThat(fh).noneMatch(r -> r.target() instanceof Target.Drop || r.target() instanceof Target.Reject);
        // The raw table has its own copy of the policy; its denials are DROP even under Reject.
        Ruleset reject = RuleRenderer.render(model(Map.of("iptablesFilterDenyAction", "Reject"),
                new DataplaneUpdate.ActivePolicyUpdate(P, DENY_IN), hep("eth0", tier(P), List.of(), List.of())), V4);
        assertThat(rules(reject, Table.RAW, Names.policyInbound(P))).extracting(GenericRule::target)
                .containsExactly(Target.DROP);
        assertThat(rules(reject, Table.FILTER, Names.policyInbound(P))).extracting(GenericRule::target)
                .containsExactly(Target.REJECT);
        // raw failsafe chains also pass the replies of the other direction's failsafe connections.
        assertThat(rules(rs, Table.RAW, Names.FAILSAFE_OUT)).contains(new GenericRule(List.of(
                new Match.Protocol("tcp", false), new Match.Ports(Match.Dir.SRC, List.of("22"), false)), Target.ACCEPT,
                "failsafe reply tcp:22"));
        // A host endpoint without untracked policy gets no raw chains.
        Ruleset plain = RuleRenderer.render(model(Map.of(), new DataplaneUpdate.ActivePolicyUpdate(P, DENY_IN),
                hep("eth0", List.of(), List.of(), List.of())), V4);
        assertThat(plain.chains(Table.RAW)).doesNotContainKey(Names.fromHostEndpoint("eth0"))
                .doesNotContainKey(Names.policyInbound(P));
    }

    @Test
    void rawPreroutingMarksWorkloadTrafficAndDropsSpoofedSources() {
        Ruleset rs = RuleRenderer.render(new DataplaneModel(), V4);
        assertThat(rules(rs, Table.RAW, Names.PREROUTING)).containsExactly(
                GenericRule.of(new Target.ClearMark(MB.all())),
                GenericRule.of(new Target.SetMark(MB.scratch()), new Match.Interface(true, "cali", true)),
                GenericRule.of(Target.DROP, new Match.MarkAllSet(MB.scratch()), new Match.ReversePathFails())
                        .withComment("workload source address does not route back to its interface"),
                GenericRule.of(new Target.Jump(Names.FROM_HOST_DISPATCH), new Match.MarkAllClear(MB.scratch())),
                GenericRule.of(Target.ACCEPT, new Match.MarkAllSet(MB.accept()))
                        .withComment("untracked policy accepted the packet"));
    }

    @Test
    void allowedSpoofedSourcesSkipTheAntiSpoofingCheckOnlyUnderWorkloadSourceSpoofingAny() {
        DataplaneUpdate wep = new DataplaneUpdate.WorkloadEndpointUpdate("ns/a", "calia", null, List.of("10.65.0.2/32"),
                List.of(), List.of(), List.of(), List.of(), DataplaneUpdate.EndpointIdentity.NONE, List.of(),
                List.of("192.0.2.0/24", "fd00:1::/64"));
        Match fromWorkload = new Match.MarkAllSet(MB.scratch());
        Match.Interface calia = new Match.Interface(true, "calia", false);
        Ruleset any = RuleRenderer.render(model(Map.of("workloadSourceSpoofing", "Any"), wep),
                Set.of(IpFamily.V4, IpFamily.V6));
        List<GenericRule> pre = rules(any, Table.RAW, Names.PREROUTING);
        assertThat(pre.subList(2, 4)).containsExactly(
                GenericRule.of(Target.RETURN, fromWorkload, new Match.Family(IpFamily.V4), calia,
                        new Match.Nets(Match.Dir.SRC, List.of("192.0.2.0/24"), false))
                        .withComment("allowed spoofed source of ns/a"),
                GenericRule.of(Target.RETURN, fromWorkload, new Match.Family(IpFamily.V6), calia,
                        new Match.Nets(Match.Dir.SRC, List.of("fd00:1::/64"), false))
                        .withComment("allowed spoofed source of ns/a"));
        assertThat(pre.get(4).matches()).as("before the check").contains(new Match.ReversePathFails());
        assertThat(rules(RuleRenderer.render(model(Map.of(), wep), V4), Table.RAW, Names.PREROUTING))
                .as("Disabled (Calico's default): the prefixes are ignored")
                .isEqualTo(rules(RuleRenderer.render(new DataplaneModel(), V4), Table.RAW, Names.PREROUTING));
        assertThat(new IptablesFormatter(IpFamily.V4).rule(pre.get(2), new HashMap<>()).get(0).render())
                .isEqualTo("-m comment --comment \"allowed spoofed source of ns/a\" -m mark --mark 0x40000/0x40000 "
                        + "-i calia -s 192.0.2.0/24 -j RETURN");
    }

    @Test
    void interfaceExcludeTakesAnInterfaceAwayFromHostEndpoints() {
        HostEndpointUpdate all = new HostEndpointUpdate("n/all", "*", List.of(), List.of(), List.of(), List.of(),
                List.of(), List.of(), List.of(), List.of(), List.of(), List.of());
        Ruleset rs = RuleRenderer.render(model(Map.of("interfaceExclude", "kube-ipvs0,/^dummy[0-9]+$/"), all,
                hep("dummy7", List.of(), List.of(), List.of()), hep("eth0", List.of(), List.of(), List.of())), V4);
        assertThat(((Dispatch) rs.chains(Table.FILTER).get(Names.FROM_HOST_DISPATCH)).targets())
                .as("a named endpoint on an interface a pattern excludes is not dispatched to")
                .containsOnlyKeys("eth0");
        assertThat(rules(rs, Table.FILTER, Names.fromHostEndpoint(Names.ALL_INTERFACES)).get(1))
                .as("the all-interfaces endpoint returns for an excluded name, after workload interfaces")
                .isEqualTo(GenericRule.of(Target.RETURN, new Match.Interface(true, "kube-ipvs0", false))
                        .withComment("interfaceExclude"));
        assertThat(rules(rs, Table.FILTER, Names.toHostEndpoint(Names.ALL_INTERFACES)).get(1))
                .isEqualTo(GenericRule.of(Target.RETURN, new Match.Interface(false, "kube-ipvs0", false))
                        .withComment("interfaceExclude"));
        Ruleset none = RuleRenderer.render(model(Map.of("interfaceExclude", ""), all,
                hep("dummy7", List.of(), List.of(), List.of())), V4);
        assertThat(((Dispatch) none.chains(Table.FILTER).get(Names.FROM_HOST_DISPATCH)).targets())
                .containsOnlyKeys("dummy7");
    }

    @Test
    void serviceLoopPreventionGuardsTheAdvertisedServiceRangesInForward() {
        DataplaneUpdate ranges = new DataplaneUpdate.ServiceCidrsUpdate(List.of("10.96.0.0/12", "fd00:96::/108"));
        Ruleset drop = RuleRenderer.render(model(Map.of(), ranges), Set.of(IpFamily.V4, IpFamily.V6));
        List<GenericRule> forward = rules(drop, Table.FILTER, Names.FORWARD);
        int jump = forward.indexOf(GenericRule.of(new Target.Jump(Names.CIDR_BLOCK)));
        assertThat(jump).as("jumped to from cali-FORWARD").isPositive();
        assertThat(forward.get(jump + 1).matches()).as("before the accept-mark verdict")
                .contains(new Match.MarkAllSet(MB.accept()));
        assertThat(rules(drop, Table.FILTER, Names.CIDR_BLOCK)).containsExactly(
                GenericRule.of(Target.DROP, new Match.Family(IpFamily.V4),
                        new Match.Nets(Match.Dir.DST, List.of("10.96.0.0/12"), false))
                        .withComment("service address not DNAT'd (serviceLoopPrevention)"),
                GenericRule.of(Target.DROP, new Match.Family(IpFamily.V6),
                        new Match.Nets(Match.Dir.DST, List.of("fd00:96::/108"), false))
                        .withComment("service address not DNAT'd (serviceLoopPrevention)"));
        Ruleset reject = RuleRenderer.render(model(Map.of("serviceLoopPrevention", "Reject"), ranges), V4);
        assertThat(rules(reject, Table.FILTER, Names.CIDR_BLOCK)).singleElement()
                .satisfies(r -> assertThat(r.target()).isEqualTo(Target.REJECT));
        Ruleset off = RuleRenderer.render(model(Map.of("serviceLoopPrevention", "Disabled"), ranges), V4);
        assertThat(off.chains(Table.FILTER)).doesNotContainKey(Names.CIDR_BLOCK);
        assertThat(rules(off, Table.FILTER, Names.FORWARD)).as("Disabled: cali-FORWARD as without ranges")
                .isEqualTo(rules(RuleRenderer.render(model(Map.of()), V4), Table.FILTER, Names.FORWARD));
    }

    @Test
    void preDnatPolicyRendersIntoMangleIngressOnly() {
        Ruleset rs = RuleRenderer.render(model(Map.of(), new DataplaneUpdate.ActivePolicyUpdate(P, DENY_IN),
                hep("eth0", List.of(), tier(P), List.of())), V4);
        assertThat(rules(rs, Table.MANGLE, Names.PREROUTING)).first().isEqualTo(GenericRule.of(Target.ACCEPT,
                new Match.Conntrack(Set.of(Match.CtState.RELATED, Match.CtState.ESTABLISHED))));
        List<GenericRule> fh = rules(rs, Table.MANGLE, Names.fromHostEndpoint("eth0"));
        assertThat(fh).contains(GenericRule.of(new Target.Jump(Names.FAILSAFE_IN)),
                GenericRule.of(new Target.Jump(Names.policyInbound(P)), new Match.MarkAllClear(MB.both())));
        assertThat(fh).noneMatch(r -> r.target() instanceof Target.Drop && r.matches().isEmpty());
        assertThat(rs.chains(Table.MANGLE)).containsKey(Names.policyInbound(P))
                .doesNotContainKey(Names.policyOutbound(P));
    }

    @Test
    void forwardChainsAllowWithoutApplyOnForwardPolicyAndDenyAtTheEndOfATier() {
        Ruleset rs = RuleRenderer.render(model(Map.of(), new DataplaneUpdate.ActivePolicyUpdate(P, DENY_IN),
                hep("eth0", List.of(), List.of(), tier(P))), V4);
        assertThat(rules(rs, Table.FILTER, Names.FORWARD)).startsWith(
                GenericRule.of(new Target.ClearMark(MB.all() & ~MB.accept())),
                GenericRule.of(new Target.Jump(Names.FROM_HEP_FORWARD_DISPATCH), new Match.MarkAllClear(MB.accept())));
        assertThat(rules(rs, Table.FILTER, Names.fromHostEndpointForward("eth0"))).contains(
                GenericRule.of(new Target.Jump(Names.policyInbound(P)), new Match.MarkAllClear(MB.both())),
                GenericRule.of(Target.RETURN, new Match.MarkAllSet(MB.accept())),
                GenericRule.of(Target.DROP, new Match.MarkAllClear(MB.pass())).withComment("end of tier default"));
        // Egress has no applyOnForward policy: forwarded traffic out of eth0 is allowed.
        assertThat(rules(rs, Table.FILTER, Names.toHostEndpointForward("eth0"))).endsWith(
                GenericRule.of(new Target.SetMark(MB.accept()))
                        .withComment("no applyOnForward policy: forwarded traffic is allowed"),
                GenericRule.of(Target.RETURN));
        assertThat(rules(rs, Table.FILTER, Names.toHostEndpointForward("eth0")))
                .noneMatch(r -> r.target().equals(new Target.Jump(Names.FAILSAFE_OUT)));
    }

    /**
     * {@code interfacePrefix: cali,tap}: every rule that matches workload interfaces (raw
     * PREROUTING's mark, FORWARD's dispatch jumps, INPUT's goto, OUTPUT's return, the
     * all-interfaces endpoint's return) is there once per prefix, in the list's order, and
     * nothing else changes.
     */
    @Test
    void everyWorkloadInterfaceRuleIsRenderedForEachPrefix() {
        HostEndpointUpdate all = new HostEndpointUpdate("n/all", "*", List.of(), List.of(), List.of(), List.of(),
                List.of());
        Ruleset one = RuleRenderer.render(model(Map.of(), all), Set.of(IpFamily.V4, IpFamily.V6));
        Ruleset two = RuleRenderer.render(model(Map.of("interfacePrefix", "cali, tap"), all),
                Set.of(IpFamily.V4, IpFamily.V6));
        int expanded = 0;
        for (Table t : Table.values()) {
            assertThat(two.chains(t).keySet()).as(t.name()).isEqualTo(one.chains(t).keySet());
            for (Map.Entry<String, GenericChain> e : one.chains(t).entrySet()) {
                if (!(e.getValue() instanceof GenericChain.Rules r)) {
                    assertThat(two.chains(t).get(e.getKey())).isEqualTo(e.getValue());
                    continue;
                }
                List<GenericRule> expected = new java.util.ArrayList<>();
                for (GenericRule rule : r.rules()) {
                    expected.add(rule);
                    if (rule.matches().stream().anyMatch(m -> m instanceof Match.Interface i && i.prefix())) {
                        expected.add(new GenericRule(rule.matches().stream()
                                .map(m -> m instanceof Match.Interface i && i.prefix()
                                        ? new Match.Interface(i.in(), "tap", true) : m).toList(),
                                rule.target(), rule.comment()));
                        expanded++;
                    }
                }
                assertThat(((GenericChain.Rules) two.chains(t).get(e.getKey())).rules()).as(t + " " + e.getKey())
                        .containsExactlyElementsOf(expected);
            }
        }
        assertThat(expanded).as("raw PREROUTING, FORWARD in and out, INPUT, OUTPUT, all-interfaces in and out")
                .isGreaterThanOrEqualTo(7);
    }

    @Test
    void allInterfacesEndpointIsTheDispatchFallbackAndSkipsWorkloadInterfaces() {
        HostEndpointUpdate all = new HostEndpointUpdate("n/all", "*", List.of(), List.of(), List.of(), List.of(),
                List.of());
        HostEndpointUpdate eth1 = new HostEndpointUpdate("n/eth1", "eth1", List.of(), List.of(), List.of(), List.of(),
                List.of());
        Ruleset rs = RuleRenderer.render(model(Map.of(), all, eth1), V4);
        TreeMap<String, String> only = new TreeMap<>(Map.of("eth1", Names.fromHostEndpoint("eth1")));
        assertThat(rs.chains(Table.FILTER).get(Names.FROM_HOST_DISPATCH)).isEqualTo(new Dispatch(
                Names.FROM_HOST_DISPATCH, true, only, new Target.Goto(Names.fromHostEndpoint(Names.ALL_INTERFACES))));
        assertThat(((Dispatch) rs.chains(Table.FILTER).get(Names.TO_HEP_FORWARD_DISPATCH)).fallback())
                .isEqualTo(new Target.Goto(Names.toHostEndpointForward(Names.ALL_INTERFACES)));
        assertThat(rules(rs, Table.FILTER, Names.toHostEndpointForward(Names.ALL_INTERFACES))).first()
                .isEqualTo(GenericRule.of(Target.RETURN, new Match.Interface(false, "cali", true))
                        .withComment("workload interfaces are not host endpoints"));
        assertThat(rules(rs, Table.FILTER, Names.fromHostEndpoint(Names.ALL_INTERFACES))).last()
                .isEqualTo(GenericRule.of(Target.DROP).withComment("no policy or profile accepted"));
        // No all-interfaces endpoint: interfaces without one fall through.
        Ruleset none = RuleRenderer.render(model(Map.of(), eth1), V4);
        assertThat(((Dispatch) none.chains(Table.FILTER).get(Names.FROM_HOST_DISPATCH)).fallback()).isNull();
    }

    @Test
    void denyActionRejectAppliesToFilterDenials() {
        DataplaneModel m = model(Map.of("iptablesFilterDenyAction", "Reject"),
                new DataplaneUpdate.ActivePolicyUpdate(P, DENY_IN),
                new DataplaneUpdate.WorkloadEndpointUpdate("ns/a", "caliA", null, List.of("10.0.0.1/32"), List.of(),
                        List.of(), tier(P), List.of()));
        Ruleset rs = RuleRenderer.render(m, V4);
        assertThat(rules(rs, Table.FILTER, Names.toWorkload("caliA"))).contains(
                GenericRule.of(Target.REJECT, new Match.Conntrack(Set.of(Match.CtState.INVALID))),
                GenericRule.of(Target.REJECT, new Match.MarkAllClear(MB.pass())).withComment("end of tier default"),
                GenericRule.of(Target.REJECT).withComment("no policy or profile accepted"));
        assertThat(RuleSettings.from(FelixSettings.from(Map.of())).denyTarget()).isEqualTo(Target.DROP);
        assertThat(RuleSettings.from(FelixSettings.from(Map.of("iptablesFilterDenyAction", "REJECT"))).denyTarget())
                .isEqualTo(Target.REJECT);
        RuleSettings nft = RuleSettings.from(FelixSettings.from(Map.of("iptablesFilterDenyAction", "Reject",
                "nftablesFilterAllowAction", "Return"))).forNftables();
        assertThat(nft.denyTarget()).as("nftables reads its own deny action").isEqualTo(Target.DROP);
        assertThat(nft.allowTarget()).as("nftables reads its own allow action").isEqualTo(Target.RETURN);
    }

    @Test
    void encapsulationIsAcceptedOnlyFromCalicoHostsWhenItIsOn() {
        DataplaneUpdate.HostMetadataUpdate node2 = new DataplaneUpdate.HostMetadataUpdate("node2", "10.9.0.2", null,
                Map.of());
        Ruleset none = RuleRenderer.render(model(Map.of(), node2,
                new DataplaneUpdate.IpPoolUpdate("p", "10.65.0.0/16", false, "Never", "Never", false),
                new DataplaneUpdate.IpPoolUpdate("v6", "fd00:65::/64", false, "Never", "Always", false)), V4);
        assertThat(rules(none, Table.FILTER, Names.INPUT).get(0).target()).as("an IPv6 VXLAN pool opens no IPv4 VXLAN")
                .isEqualTo(new Target.Goto(Names.WL_TO_HOST));
        assertThat(none.driverSets()).doesNotContainKey(Names.ALL_HOSTS_SET);
        Ruleset turnedOff = RuleRenderer.render(model(Map.of("ipipEnabled", "false", "vxlanEnabled", "false"), node2,
                new DataplaneUpdate.IpPoolUpdate("p", "10.65.0.0/16", false, "Always", "Always", false)), V4);
        assertThat(rules(turnedOff, Table.FILTER, Names.INPUT).get(0).target()).as("explicit ipipEnabled/vxlanEnabled win")
                .isEqualTo(new Target.Goto(Names.WL_TO_HOST));
        Ruleset disabledPool = RuleRenderer.render(model(Map.of(), node2,
                new DataplaneUpdate.IpPoolUpdate("off", "10.66.0.0/16", false, "Always", "Never", true)), V4);
        assertThat(rules(disabledPool, Table.FILTER, Names.INPUT).get(0).comment())
                .as("a disabled pool still counts (Calico): its workloads keep their tunnels")
                .isEqualTo("IPIP from Calico hosts");

        Ruleset on = RuleRenderer.render(model(Map.of(), node2,
                new DataplaneUpdate.IpPoolUpdate("p", "10.65.0.0/16", false, "Always", "CrossSubnet", false)), V4);
        Match fromHosts = new Match.InSet(Match.Dir.SRC, IpFamily.V4, Names.ALL_HOSTS_SET, false);
        Match vxlanPort = new Match.Ports(Match.Dir.DST, List.of("4789"), false);
        assertThat(rules(on, Table.FILTER, Names.INPUT)).startsWith(
                GenericRule.of(Target.ACCEPT, new Match.Family(IpFamily.V4), new Match.Protocol("4", false), fromHosts,
                        new Match.DstLocal(false)).withComment("IPIP from Calico hosts"),
                GenericRule.of(Target.DROP, new Match.Family(IpFamily.V4), new Match.Protocol("4", false))
                        .withComment("IPIP from other hosts"),
                GenericRule.of(Target.ACCEPT, new Match.Family(IpFamily.V4), new Match.Protocol("udp", false),
                        vxlanPort, fromHosts, new Match.DstLocal(false)).withComment("VXLAN from Calico hosts"),
                GenericRule.of(Target.DROP, new Match.Family(IpFamily.V4), new Match.Protocol("udp", false),
                        vxlanPort, new Match.DstLocal(false)).withComment("VXLAN from other hosts"));
        assertThat(on.driverSets().get(Names.ALL_HOSTS_SET)).containsExactly("10.9.0.2/32");
        Ruleset otherPort = RuleRenderer.render(model(Map.of("vxlanPort", "4790"), node2,
                new DataplaneUpdate.IpPoolUpdate("p", "10.65.0.0/16", false, "Never", "Always", false)), V4);
        assertThat(rules(otherPort, Table.FILTER, Names.INPUT).get(0).matches()).as("the VXLAN rules follow vxlanPort")
                .contains(new Match.Ports(Match.Dir.DST, List.of("4790"), false));
        assertThat(new IptablesFormatter(IpFamily.V4).rule(rules(on, Table.FILTER, Names.INPUT).get(0),
                new HashMap<>()).get(0).render()).isEqualTo("-m comment --comment \"IPIP from Calico hosts\" -p 4 "
                + "-m set --match-set cali40all-hosts-net src -m addrtype --dst-type LOCAL -j ACCEPT");
    }

    @Test
    void externalNodesListJoinsTheCalicoHostsWhoseEncapsulationIsAccepted() {
        DataplaneUpdate.HostMetadataUpdate node2 = new DataplaneUpdate.HostMetadataUpdate("node2", "10.9.0.2", null,
                Map.of());
        DataplaneUpdate.IpPoolUpdate ipip = new DataplaneUpdate.IpPoolUpdate("p", "10.65.0.0/16", false, "Always",
                "Never", false);
        Ruleset on = RuleRenderer.render(model(Map.of("externalNodesList", "192.0.2.0/24, 198.51.100.7"), node2, ipip),
                V4);
        assertThat(on.driverSets().get(Names.ALL_HOSTS_SET)).containsExactlyInAnyOrder("10.9.0.2/32", "192.0.2.0/24",
                "198.51.100.7/32");
        assertThat(RuleRenderer.render(model(Map.of(), node2, ipip), V4).driverSets().get(Names.ALL_HOSTS_SET))
                .as("without externalNodesList only the nodes").containsExactly("10.9.0.2/32");
        assertThat(RuleRenderer.render(model(Map.of("externalNodesList", "192.0.2.0/24"), node2), V4).driverSets())
                .as("no encapsulation: no hosts' set at all").doesNotContainKey(Names.ALL_HOSTS_SET);
    }

    @Test
    void ipv6VxlanIsAcceptedOnlyFromCalicoHostsWhenAnIpv6PoolUsesIt() {
        DataplaneUpdate.HostMetadataUpdate node2 = new DataplaneUpdate.HostMetadataUpdate("node2", "10.9.0.2",
                "fd00:9::2", Map.of());
        Set<IpFamily> both = Set.of(IpFamily.V4, IpFamily.V6);
        Ruleset on = RuleRenderer.render(model(Map.of(), node2,
                new DataplaneUpdate.IpPoolUpdate("p", "10.65.0.0/16", false, "Never", "Never", false),
                new DataplaneUpdate.IpPoolUpdate("v6", "fd00:65::/64", false, "Never", "Always", false)), both);
        Match vxlanPort = new Match.Ports(Match.Dir.DST, List.of("4789"), false);
        assertThat(rules(on, Table.FILTER, Names.INPUT)).startsWith(
                GenericRule.of(Target.ACCEPT, new Match.Family(IpFamily.V6), new Match.Protocol("udp", false), vxlanPort,
                        new Match.InSet(Match.Dir.SRC, IpFamily.V6, Names.ALL_HOSTS_SET, false),
                        new Match.DstLocal(false)).withComment("IPv6 VXLAN from Calico hosts"),
                GenericRule.of(Target.DROP, new Match.Family(IpFamily.V6), new Match.Protocol("udp", false), vxlanPort,
                        new Match.DstLocal(false)).withComment("IPv6 VXLAN from other hosts"));
        assertThat(on.driverSets().get(Names.ALL_HOSTS_SET)).contains("fd00:9::2/128");
        assertThat(rules(on, Table.FILTER, Names.INPUT)).as("no IPv4 VXLAN pool: no IPv4 VXLAN rule")
                .noneMatch(r -> r.matches().contains(new Match.Family(IpFamily.V4)));
        Ruleset v4Only = RuleRenderer.render(model(Map.of(), node2,
                new DataplaneUpdate.IpPoolUpdate("v6", "fd00:65::/64", false, "Never", "Always", false)), V4);
        assertThat(rules(v4Only, Table.FILTER, Names.INPUT).get(0).target()).as("an IPv4-only ruleset has no IPv6 rules")
                .isEqualTo(new Target.Goto(Names.WL_TO_HOST));
        Ruleset off = RuleRenderer.render(model(Map.of("vxlanEnabled", "false"), node2,
                new DataplaneUpdate.IpPoolUpdate("v6", "fd00:65::/64", false, "Never", "Always", false)), both);
        assertThat(rules(off, Table.FILTER, Names.INPUT).get(0).target()).as("vxlanEnabled false turns IPv6 VXLAN off too")
                .isEqualTo(new Target.Goto(Names.WL_TO_HOST));
        assertThat(new IptablesFormatter(IpFamily.V6).rule(rules(on, Table.FILTER, Names.INPUT).get(0),
                new HashMap<>()).get(0).render()).isEqualTo("-m comment --comment \"IPv6 VXLAN from Calico hosts\" -p udp "
                + "-m multiport --destination-ports 4789 -m set --match-set cali60all-hosts-net src -m addrtype --dst-type LOCAL -j ACCEPT");
    }

    @Test
    void dnatHostTrafficMeetsHostEndpointEgressInManglePostrouting() {
        Ruleset rs = RuleRenderer.render(model(Map.of("iptablesFilterDenyAction", "Reject"),
                new DataplaneUpdate.ActivePolicyUpdate(P, DENY_IN),
                new DataplaneUpdate.ActiveProfileUpdate("prof", new CompiledPolicy(List.of(), List.of(), false)),
                new HostEndpointUpdate("n/eth0", "eth0", List.of(),
                        List.of(), List.of("prof"), List.of(), tier(P))), V4);
        assertThat(rules(rs, Table.MANGLE, Names.POSTROUTING)).containsExactly(
                GenericRule.of(Target.RETURN, new Match.MarkAllSet(MB.accept())).withComment("forwarded, or already accepted"),
                GenericRule.of(new Target.ClearMark(MB.all())),
                GenericRule.of(new Target.Jump(Names.TO_HOST_DISPATCH), new Match.ConntrackDnat(false)),
                GenericRule.of(Target.RETURN, new Match.MarkAllSet(MB.accept()))
                        .withComment("host endpoint policy accepted the packet"));
        List<GenericRule> th = rules(rs, Table.MANGLE, Names.toHostEndpoint("eth0"));
        Match est = new Match.Conntrack(Set.of(Match.CtState.RELATED, Match.CtState.ESTABLISHED));
        assertThat(th).containsSubsequence(GenericRule.of(new Target.SetMark(MB.accept()), est),
                GenericRule.of(Target.RETURN, est), GenericRule.of(new Target.Jump(Names.FAILSAFE_OUT)),
                GenericRule.of(new Target.Jump(Names.policyOutbound(P)), new Match.MarkAllClear(MB.both())),
                GenericRule.of(Target.RETURN, new Match.MarkAllSet(MB.accept())),
                GenericRule.of(Target.DROP, new Match.MarkAllClear(MB.pass())).withComment("end of tier default"),
                GenericRule.of(new Target.Jump(Names.profileOutbound("prof"))),
                GenericRule.of(Target.DROP).withComment("no policy or profile accepted"));
        assertThat(rs.chains(Table.MANGLE)).containsKey(Names.policyOutbound(P)).containsKey(Names.FAILSAFE_OUT);
        assertThat(rules(rs, Table.FILTER, Names.FORWARD)).last().isEqualTo(GenericRule.of(
                new Target.SetMark(MB.accept())).withComment("forwarded: mangle POSTROUTING leaves it to the forward policy"));
    }

    @Test
    void formattersSayTheNewMatchesAndTargets() {
        IptablesFormatter ipt = new IptablesFormatter(IpFamily.V4);
        Map<String, Set<String>> sets = new HashMap<>();
        assertThat(ipt.rule(GenericRule.of(Target.DROP, new Match.MarkAllSet(0x40000), new Match.ReversePathFails()),
                sets).get(0).render()).isEqualTo("-m mark --mark 0x40000/0x40000 -m rpfilter --validmark --invert -j DROP");
        assertThat(ipt.rule(GenericRule.of(Target.RETURN, new Match.ConntrackDnat(false)), sets).get(0).render())
                .isEqualTo("-m conntrack --ctstate DNAT -j RETURN");
        assertThat(ipt.rule(GenericRule.of(Target.ACCEPT, new Match.ConntrackDnat(true)), sets).get(0).render())
                .isEqualTo("-m conntrack ! --ctstate DNAT -j ACCEPT");
        assertThat(ipt.rule(GenericRule.of(new Target.NoTrack()), sets).get(0).render()).isEqualTo("-j NOTRACK");
        assertThat(ipt.rule(GenericRule.of(Target.REJECT), sets).get(0).render()).isEqualTo("-j REJECT");

        assertThat(NftRuleFormatter.match(new Match.ReversePathFails()).toString()).isEqualTo("[{\"match\":{\"op\":"
                + "\"==\",\"left\":{\"fib\":{\"result\":\"oif\",\"flags\":[\"saddr\",\"mark\",\"iif\"]}},\"right\":false}}]");
        assertThat(NftRuleFormatter.match(new Match.ConntrackDnat(false)).toString())
                .isEqualTo("[{\"match\":{\"op\":\"in\",\"left\":{\"ct\":{\"key\":\"status\"}},\"right\":\"dnat\"}}]");
        assertThat(NftRuleFormatter.match(new Match.ConntrackDnat(true)).toString())
                .isEqualTo("[{\"match\":{\"op\":\"!\",\"left\":{\"ct\":{\"key\":\"status\"}},\"right\":\"dnat\"}}]");
        assertThat(NftRuleFormatter.target(Table.RAW, new Target.NoTrack()).toString()).isEqualTo("{\"notrack\":null}");
        assertThat(NftRuleFormatter.target(Table.FILTER, Target.REJECT).toString()).isEqualTo("{\"reject\":null}");
    }
}
