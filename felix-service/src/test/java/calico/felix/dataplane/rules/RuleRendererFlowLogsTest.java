package calico.felix.dataplane.rules;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.Action;
import calico.api.model.ResourceKind;
import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.CompiledRule;
import calico.felix.calc.CompiledRule.Side;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.PolicyId;
import calico.felix.calc.TierPolicies;
import calico.felix.dataplane.iptables.IptablesFormatter;
import calico.felix.dataplane.nft.NftRuleFormatter;
import calico.felix.dataplane.rules.GenericChain.Rules;
import calico.felix.dataplane.rules.Ruleset.Table;
import calico.felix.calc.FelixSettings;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Flow logs' NFLOG rules: present before every verdict only when {@code flowLogsGoldmaneServer}
 * is set, in the right group, with prefixes the {@link HitTable} decodes; verdict rules unchanged.
 */
class RuleRendererFlowLogsTest {

    static final Set<IpFamily> BOTH = Set.of(IpFamily.V4, IpFamily.V6);
    static final PolicyId P = new PolicyId("default", "prod", "web", ResourceKind.NETWORK_POLICY);
    static final PolicyId STAGED = new PolicyId("default", "prod", "web-tight", ResourceKind.STAGED_NETWORK_POLICY);

    static CompiledRule rule(Action a, String... ports) {
        Side dst = new Side(List.of(), List.of(), List.of(ports), List.of(), List.of(), List.of(), List.of(), List.of());
        return new CompiledRule(a, null, "TCP", null, null, null, Side.ANY, dst, null);
    }

    static DataplaneModel model(boolean flowLogs) {
        DataplaneModel m = new DataplaneModel();
        m.apply(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(flowLogs ? Map.of("flowLogsGoldmaneServer", "goldmane:7443")
                : Map.of())));
        m.apply(new DataplaneUpdate.ActivePolicyUpdate(P, new CompiledPolicy(
                List.of(rule(Action.Allow, "80"), rule(Action.Deny, "81"), rule(Action.Pass, "82")),
                List.of(rule(Action.Allow)), false)));
        m.apply(new DataplaneUpdate.ActivePolicyUpdate(STAGED, new CompiledPolicy(List.of(rule(Action.Deny)),
                List.of(), true)));
        m.apply(new DataplaneUpdate.ActiveProfileUpdate("kns.prod", new CompiledPolicy(List.of(rule(Action.Allow)),
                List.of(), false)));
        m.apply(new DataplaneUpdate.WorkloadEndpointUpdate("prod/wep", "cali1", null, List.of("10.0.0.1/32"),
                List.of(), List.of("kns.prod"), List.of(new TierPolicies("default", Action.Deny, List.of(STAGED, P),
                false)), List.of()));
        return m;
    }

    static List<GenericRule> chain(Ruleset rs, String name) {
        return ((Rules) rs.chains(Table.FILTER).get(name)).rules();
    }

    static boolean nflog(GenericRule r) {
        return r.target() instanceof Target.Nflog;
    }

    @Test
    void offRendersNoNflogRuleAndOnlyAddsNflogRulesWhenOn() {
        Ruleset off = RuleRenderer.render(model(false), BOTH);
        Ruleset on = RuleRenderer.render(model(true), BOTH);
        off.chains(Table.FILTER).values().stream().filter(c -> c instanceof Rules).flatMap(c -> ((Rules) c).rules()
                .stream()).forEach(r -> assertThat(nflog(r)).isFalse());
        // With the NFLOG rules taken out, every chain is exactly what flow logs off renders.
        assertThat(on.chains(Table.FILTER).keySet()).isEqualTo(off.chains(Table.FILTER).keySet());
        on.chains(Table.FILTER).forEach((name, c) -> {
            if (c instanceof Rules r) {
                assertThat(r.rules().stream().filter(x -> !nflog(x)).toList()).as(name)
                        .isEqualTo(((Rules) off.chains(Table.FILTER).get(name)).rules());
            } else {
                assertThat(c).isEqualTo(off.chains(Table.FILTER).get(name));
            }
        });
        assertThat(on.chains(Table.RAW)).isEqualTo(off.chains(Table.RAW));
        assertThat(on.chains(Table.MANGLE)).isEqualTo(off.chains(Table.MANGLE));
    }

    @Test
    void everyVerdictOfAPolicyLogsRightBeforeItInItsDirectionsGroup() {
        Ruleset on = RuleRenderer.render(model(true), BOTH);
        List<GenericRule> in = chain(on, Names.policyInbound(P));
        MarkBits marks = MarkBits.defaults();
        Match accept = new Match.MarkAllSet(marks.accept());
        Match pass = new Match.MarkAllSet(marks.pass());
        Match tcp = new Match.Protocol("tcp", false);
        assertThat(in).containsExactly(
                GenericRule.of(new Target.SetMark(marks.accept()), tcp, new Match.Ports(Match.Dir.DST, List.of("80"),
                        false)),
                GenericRule.of(new Target.Nflog(1, "API0|np/prod/web"), accept),
                GenericRule.of(Target.RETURN, accept),
                GenericRule.of(new Target.Nflog(1, "DPI1|np/prod/web"), tcp, new Match.Ports(Match.Dir.DST,
                        List.of("81"), false)),
                GenericRule.of(Target.DROP, tcp, new Match.Ports(Match.Dir.DST, List.of("81"), false)),
                GenericRule.of(new Target.SetMark(marks.pass()), tcp, new Match.Ports(Match.Dir.DST, List.of("82"),
                        false)),
                GenericRule.of(new Target.Nflog(1, "PPI2|np/prod/web"), pass),
                GenericRule.of(Target.RETURN, pass));
        assertThat(chain(on, Names.policyOutbound(P))).contains(GenericRule.of(new Target.Nflog(2, "APE0|np/prod/web"),
                accept));
        assertThat(chain(on, Names.profileInbound("kns.prod"))).contains(
                GenericRule.of(new Target.Nflog(1, "ARI0|pro/kns.prod"), accept));
        // Staged policies are never rendered, so they never log.
        assertThat(on.chains(Table.FILTER).keySet()).noneMatch(n -> n.equals(Names.policyInbound(STAGED)));
    }

    @Test
    void endpointChainsLogEndOfTierAndNoProfileDropsAfterTheConntrackRules() {
        Ruleset on = RuleRenderer.render(model(true), BOTH);
        List<GenericRule> tw = chain(on, Names.toWorkload("cali1"));
        MarkBits marks = MarkBits.defaults();
        int est = indexOf(tw, r -> r.matches().contains(new Match.Conntrack(Set.of(Match.CtState.RELATED,
                Match.CtState.ESTABLISHED))));
        int eot = tw.indexOf(GenericRule.of(new Target.Nflog(1, "DPI|default"), new Match.MarkAllClear(marks.pass())));
        assertThat(est).isNotNegative();
        assertThat(eot).as("established connections are accepted before any NFLOG rule").isGreaterThan(est);
        assertThat(tw.get(eot + 1).target()).isEqualTo(Target.DROP);
        int dri = tw.indexOf(GenericRule.of(new Target.Nflog(1, "DRI")));
        assertThat(tw.get(dri + 1)).isEqualTo(GenericRule.of(Target.DROP).withComment("no policy or profile accepted"));
        assertThat(chain(on, Names.fromWorkload("cali1"))).contains(GenericRule.of(new Target.Nflog(2, "DRE")));
        // Every prefix rendered decodes with the table the renderer publishes for the model.
        HitTable table = RuleRenderer.hitTable(model(true));
        on.chains(Table.FILTER).values().stream().filter(c -> c instanceof Rules)
                .flatMap(c -> ((Rules) c).rules().stream()).filter(RuleRendererFlowLogsTest::nflog)
                .forEach(r -> assertThat(table.decode(((Target.Nflog) r.target()).prefix())).as(r.toString())
                        .isNotNull());
    }

    @Test
    void bothFormattersSayNflog() {
        Map<String, Set<String>> sets = new HashMap<>();
        assertThat(new IptablesFormatter(IpFamily.V4).rule(GenericRule.of(new Target.Nflog(2, "DPE|default")), sets)
                .get(0).render()).isEqualTo("-j NFLOG --nflog-prefix DPE|default --nflog-group 2");
        assertThat(NftRuleFormatter.target(Table.FILTER, new Target.Nflog(1, "API0|np/prod/web")).toString())
                .isEqualTo("{\"log\":{\"prefix\":\"API0|np/prod/web\",\"group\":1}}");
    }

    private static int indexOf(List<GenericRule> rules, java.util.function.Predicate<GenericRule> p) {
        for (int i = 0; i < rules.size(); i++) {
            if (p.test(rules.get(i))) {
                return i;
            }
        }
        return -1;
    }
}
