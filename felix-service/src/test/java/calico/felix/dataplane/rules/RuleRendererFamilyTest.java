package calico.felix.dataplane.rules;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.Action;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.CompiledRule;
import calico.felix.calc.CompiledRule.Side;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.IpSetMember;
import calico.felix.calc.IpSetType;
import calico.felix.calc.PolicyId;
import calico.felix.dataplane.rules.Match.Dir;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** How rules split across address families, and which kernel sets each family needs. */
class RuleRendererFamilyTest {

    private final RuleRenderer both = new RuleRenderer(MarkBits.defaults(), List.of("cali"), Set.of(IpFamily.V4, IpFamily.V6));
    private final RuleRenderer v4 = new RuleRenderer(MarkBits.defaults(), List.of("cali"), Set.of(IpFamily.V4));

    private static Side nets(String... nets) {
        return new Side(List.of(nets), List.of(), List.of(), List.of(), List.of(), List.of(), List.of(), List.of());
    }

    private static Side sets(String... ids) {
        return new Side(List.of(), List.of(), List.of(), List.of(), List.of(ids), List.of(), List.of(), List.of());
    }

    private static CompiledRule deny(String proto, Side src, Side dst) {
        return new CompiledRule(Action.Deny, null, proto, null, null, null, src, dst, null);
    }

    @Test
    void mixedNetsGiveOneRulePerFamilyWithThatFamilysNetsOnly() {
        List<GenericRule> out = both.rule(deny(null, nets("10.0.0.0/8", "fd00::/64"), Side.ANY));
        assertThat(out).containsExactly(
                GenericRule.of(Target.DROP, new Match.Family(IpFamily.V4), new Match.Nets(Dir.SRC, List.of("10.0.0.0/8"), false)),
                GenericRule.of(Target.DROP, new Match.Family(IpFamily.V6), new Match.Nets(Dir.SRC, List.of("fd00::/64"), false)));
    }

    @Test
    void netsOfOnlyOneFamilyNeverMatchTheOther() {
        assertThat(both.rule(deny(null, nets("10.0.0.0/8"), Side.ANY))).hasSize(1)
                .allMatch(r -> r.matches().contains(new Match.Family(IpFamily.V4)));
        assertThat(new RuleRenderer(MarkBits.defaults(), List.of("cali"), Set.of(IpFamily.V6))
                .rule(deny(null, nets("10.0.0.0/8"), Side.ANY))).isEmpty();
    }

    @Test
    void setsAreLookedUpInEachFamilysSetAndFamilyNeutralRulesStayOne() {
        List<GenericRule> out = both.rule(deny("TCP", sets("s:a"), Side.ANY));
        assertThat(out).extracting(r -> r.matches().get(2)).containsExactly(
                new Match.InSet(Dir.SRC, IpFamily.V4, "s:a", false), new Match.InSet(Dir.SRC, IpFamily.V6, "s:a", false));
        assertThat(both.rule(deny("TCP", Side.ANY, Side.ANY)))
                .containsExactly(GenericRule.of(Target.DROP, new Match.Protocol("tcp", false)));
    }

    @Test
    void icmpAndIpVersionPickTheirFamily() {
        assertThat(both.rule(deny("ICMPv6", Side.ANY, Side.ANY))).hasSize(1)
                .allMatch(r -> r.matches().contains(new Match.Family(IpFamily.V6)));
        assertThat(v4.rule(deny("ICMPv6", Side.ANY, Side.ANY))).isEmpty();
        CompiledRule only6 = new CompiledRule(Action.Allow, 6, null, null, null, null, Side.ANY, Side.ANY, null);
        assertThat(v4.rule(only6)).isEmpty(); // and no stray RETURN either
        assertThat(both.rule(only6)).hasSize(2);
    }

    @Test
    void setPlanSplitsGraphSetsByFamilyAndProgramsUnknownReferencedSetsEmpty() {
        DataplaneModel m = new DataplaneModel();
        m.apply(new DataplaneUpdate.IpSetUpdate("s:a", IpSetType.NET, Set.of(
                IpSetMember.net(Cidr.parse("10.0.0.1/32")), IpSetMember.net(Cidr.parse("fd00::1/128")))));
        CompiledPolicy p = new CompiledPolicy(List.of(deny(null, sets("s:a", "s:later"), Side.ANY)), List.of(), false);
        m.apply(new DataplaneUpdate.ActivePolicyUpdate(new PolicyId("default", null, "p",
                ResourceKind.GLOBAL_NETWORK_POLICY), p));
        var plan = SetPlan.of(m, RuleRenderer.render(m, Set.of(IpFamily.V4, IpFamily.V6)));
        assertThat(plan).containsOnlyKeys(Names.ipSet(IpFamily.V4, "s:a"), Names.ipSet(IpFamily.V6, "s:a"),
                Names.ipSet(IpFamily.V4, "s:later"), Names.ipSet(IpFamily.V6, "s:later"));
        assertThat(plan.get(Names.ipSet(IpFamily.V4, "s:a")).members())
                .containsExactly(IpSetMember.net(Cidr.parse("10.0.0.1/32")));
        assertThat(plan.get(Names.ipSet(IpFamily.V6, "s:a")).members())
                .containsExactly(IpSetMember.net(Cidr.parse("fd00::1/128")));
        assertThat(plan.get(Names.ipSet(IpFamily.V6, "s:later")).members()).isEmpty();
        assertThat(Names.ipSet(IpFamily.V6, "s:a")).startsWith("cali60").hasSize(31);
        assertThat(Names.ipSet(IpFamily.V4, "all-ipam-pools")).isEqualTo("cali40all-ipam-pools");
    }
}
