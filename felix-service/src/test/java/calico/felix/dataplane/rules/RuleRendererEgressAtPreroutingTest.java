package calico.felix.dataplane.rules;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.Action;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.FelixSettings;
import calico.felix.dataplane.rules.GenericChain.Dispatch;
import calico.felix.dataplane.rules.GenericChain.Rules;
import calico.felix.dataplane.rules.Ruleset.Entry;
import calico.felix.dataplane.rules.Ruleset.Hook;
import calico.felix.dataplane.rules.Ruleset.Table;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * rules.md §2b: the nftables layout judges a workload's egress once, at prerouting, so the kernel's validation
 * walk reaches the from-workload dispatch from one base chain; iptables and kube-proxy's IPVS mode keep §2's.
 * The packets' side is the shared packet scenarios (nftables driver) and the policy matrices.
 */
class RuleRendererEgressAtPreroutingTest {

    private static final Set<IpFamily> BOTH = Set.of(IpFamily.V4, IpFamily.V6);

    private static DataplaneModel model(Map<String, String> config) {
        DataplaneModel m = new DataplaneModel();
        m.apply(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(config)));
        m.apply(new DataplaneUpdate.WorkloadEndpointUpdate("ns/a", "calia", null, List.of("10.65.0.2/32"), List.of(),
                List.of(), List.of(), List.of(new calico.felix.calc.TierPolicies("default", Action.Deny, List.of(),
                false))));
        return m;
    }

    /** {@return the filter base chains from which {@code target} is reachable} */
    private static Set<Hook> hooksReaching(Ruleset rs, String target) {
        Set<Hook> out = new TreeSet<>();
        for (Entry e : rs.entries()) {
            if (e.table() != Table.FILTER) {
                continue;
            }
            Set<String> seen = new TreeSet<>();
            Deque<String> todo = new ArrayDeque<>(List.of(e.chain()));
            while (!todo.isEmpty()) {
                String name = todo.pop();
                GenericChain c = rs.chains(Table.FILTER).get(name);
                if (c == null || !seen.add(name)) {
                    continue;
                }
                if (c instanceof Rules r) {
                    for (GenericRule rule : r.rules()) {
                        if (rule.target() instanceof Target.Jump j) {
                            todo.push(j.chain());
                        } else if (rule.target() instanceof Target.Goto g) {
                            todo.push(g.chain());
                        }
                    }
                } else if (c instanceof Dispatch d) {
                    todo.addAll(d.targets().values());
                }
            }
            if (seen.contains(target)) {
                out.add(e.hook());
            }
        }
        return out;
    }

    @Test
    void nftablesReachesTheWorkloadsEgressChainsFromPreroutingOnly() {
        DataplaneModel m = model(Map.of("vxlanEnabled", "true"));
        Ruleset nft = RuleRenderer.render(m, BOTH, m.settings().forNftables());
        assertThat(nft.entries()).contains(new Entry(Table.FILTER, Hook.PREROUTING, Names.PREROUTING));
        assertThat(hooksReaching(nft, Names.fromWorkload("calia"))).containsExactly(Hook.PREROUTING);
        assertThat(hooksReaching(nft, Names.toWorkload("calia"))).containsExactly(Hook.FORWARD);

        MarkBits mb = MarkBits.defaults();
        List<GenericRule> egress = ((Rules) nft.chains(Table.FILTER).get(Names.WL_EGRESS)).rules();
        assertThat(egress.get(0)).isEqualTo(GenericRule.of(new Target.SetMark(mb.pass() | mb.scratch()))
                .withComment("not judged yet"));
        assertThat(egress.get(egress.size() - 2)).isEqualTo(GenericRule.of(new Target.Jump(Names.FROM_WL_DISPATCH)));
        assertThat(egress.get(egress.size() - 1).target()).isEqualTo(new Target.ClearMark(mb.scratch()));
        // What INPUT decides before a workload's policy is left unjudged, to a local address only.
        Match vxlanPort = new Match.Ports(Match.Dir.DST, List.of("4789"), false);
        assertThat(egress).contains(GenericRule.of(Target.RETURN, new Match.Family(IpFamily.V4),
                new Match.Protocol("udp", false), vxlanPort, new Match.DstLocal(false))
                .withComment("INPUT decides it before any workload policy"));
        assertThat(egress).contains(GenericRule.of(Target.RETURN, new Match.Family(IpFamily.V6),
                new Match.Protocol("ipv6-icmp", false), new Match.Icmp(IpFamily.V6, 135, null, false),
                new Match.DstLocal(false)).withComment("to the host: cali-wl-to-host allows it"));

        Match fromWl = new Match.Interface(true, "cali", true);
        List<GenericRule> forward = ((Rules) nft.chains(Table.FILTER).get(Names.FORWARD)).rules();
        assertThat(forward.subList(0, 2)).containsExactly(
                GenericRule.of(Target.ACCEPT, fromWl, new Match.MarkEquals(mb.scratch(), mb.scratch() | mb.pass()))
                        .withComment("the workload's egress chain accepted it at prerouting"),
                GenericRule.of(Target.DROP, fromWl, new Match.MarkAllSet(mb.scratch()))
                        .withComment("from a workload, not judged at prerouting"));
        List<GenericRule> toHost = ((Rules) nft.chains(Table.FILTER).get(Names.WL_TO_HOST)).rules();
        assertThat(toHost.subList(toHost.size() - 3, toHost.size())).containsExactly(
                GenericRule.of(Target.ACCEPT, new Match.MarkEquals(mb.scratch(), mb.scratch() | mb.pass()))
                        .withComment("the workload's egress chain accepted it at prerouting"),
                GenericRule.of(Target.DROP, new Match.MarkAllSet(mb.scratch()))
                        .withComment("from a workload, not judged at prerouting"),
                GenericRule.of(Target.DROP).withComment("defaultEndpointToHostAction"));
    }

    @Test
    void iptablesAndIpvsModeKeepTheTwoPaths() {
        DataplaneModel m = model(Map.of());
        Ruleset iptables = RuleRenderer.render(m, Set.of(IpFamily.V4));
        assertThat(iptables.entries()).doesNotContain(new Entry(Table.FILTER, Hook.PREROUTING, Names.PREROUTING));
        assertThat(iptables.chains(Table.FILTER)).doesNotContainKey(Names.WL_EGRESS);
        assertThat(hooksReaching(iptables, Names.fromWorkload("calia"))).containsExactlyInAnyOrder(Hook.FORWARD, Hook.INPUT);

        Ruleset ipvs = RuleRenderer.render(m, BOTH, m.settings().forNftables().withKubeIpvs(true));
        assertThat(ipvs.chains(Table.FILTER)).doesNotContainKey(Names.WL_EGRESS);
        assertThat(hooksReaching(ipvs, Names.fromWorkload("calia"))).contains(Hook.FORWARD, Hook.INPUT);
    }
}
