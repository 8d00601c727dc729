package calico.felix.dataplane.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.DataplaneUpdate.HostEndpointUpdate;
import calico.felix.calc.FelixSettings;
import calico.felix.dataplane.iptables.IptablesFormatter;
import calico.felix.dataplane.rules.GenericChain.Rules;
import calico.felix.dataplane.rules.Ruleset.Table;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** kube-proxy's IPVS mode: Calico's forward-check and endpoint-mark chains, and {@code kubeNodePortRanges} in them. */
class RuleRendererKubeIpvsTest {

    private static final Set<IpFamily> V4 = Set.of(IpFamily.V4);

    private static DataplaneModel model(Map<String, String> config, boolean ipvs) {
        DataplaneModel m = new DataplaneModel();
        m.kubeIpvs(ipvs);
        m.apply(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(new HashMap<>(config))));
        m.apply(new DataplaneUpdate.WorkloadEndpointUpdate("test/a", "cali1", null, List.of("10.65.0.1/32"), List.of(),
                List.of(), List.of(), List.of()));
        m.apply(new HostEndpointUpdate("n/eth0", "eth0", List.of(), List.of(), List.of(), List.of(), List.of()));
        return m;
    }

    private static List<GenericRule> rules(Ruleset rs, String name) {
        assertThat(rs.chains(Table.FILTER)).as(name).containsKey(name);
        return ((Rules) rs.chains(Table.FILTER).get(name)).rules();
    }

    private static List<String> iptables(List<GenericRule> rules) {
        IptablesFormatter f = new IptablesFormatter(IpFamily.V4);
        return rules.stream().flatMap(r -> f.rule(r, new HashMap<>()).stream()).map(calico.dataplane.iptables.Rule::render).toList();
    }

    @Test
    void withoutIpvsNothingChanges() {
        Ruleset off = RuleRenderer.render(model(Map.of("kubeNodePortRanges", "31000:31999"), false), V4);
        assertThat(off.chains(Table.FILTER)).doesNotContainKeys(Names.FORWARD_CHECK, Names.SET_ENDPOINT_MARK,
                Names.FROM_ENDPOINT_MARK, Names.FORWARD_ENDPOINT_MARK);
        assertThat(rules(off, Names.INPUT)).isEqualTo(rules(RuleRenderer.render(model(Map.of(), false), V4),
                Names.INPUT));
    }

    @Test
    void ipvsSendsNodePortsOnLocalAddressesToTheForwardPolicy() {
        Ruleset rs = RuleRenderer.render(model(Map.of("kubeNodePortRanges", "30000:32767,32800"), true), V4);
        MarkBits mb = MarkBits.defaults();
        assertThat(mb.endpoint()).isEqualTo(0xfff80000L);
        List<GenericRule> input = rules(rs, Names.INPUT);
        int check = input.indexOf(GenericRule.of(new Target.Jump(Names.FORWARD_CHECK)));
        assertThat(check).isPositive();
        assertThat(input.get(check - 1)).isEqualTo(GenericRule.of(new Target.ClearMark(mb.endpoint())));
        assertThat(input.get(check + 1).target()).isEqualTo(Target.RETURN);
        assertThat(input.get(check + 1).matches()).containsExactly(new Match.MarkAnySet(mb.endpoint()));
        assertThat(iptables(rules(rs, Names.FORWARD_CHECK))).containsExactly(
                "-m conntrack --ctstate RELATED,ESTABLISHED -j RETURN",
                "-m comment --comment \"To kubernetes NodePort service\" -p tcp -m multiport --destination-ports "
                        + "30000:32767,32800 -m addrtype --dst-type LOCAL -g cali-set-endpoint-mark",
                "-m comment --comment \"To kubernetes NodePort service\" -p udp -m multiport --destination-ports "
                        + "30000:32767,32800 -m addrtype --dst-type LOCAL -g cali-set-endpoint-mark",
                "-m comment --comment \"To kubernetes service\" -m addrtype ! --dst-type LOCAL "
                        + "-j cali-set-endpoint-mark");
        EndpointMarks em = EndpointMarks.allocate(mb, List.of("cali1", "eth0"));
        assertThat(em.nonCalico()).isEqualTo(0x80000L);
        assertThat(em.byName().values()).doesNotHaveDuplicates().allMatch(v -> (v & ~mb.endpoint()) == 0
                && v != em.nonCalico() && v != 0);
        assertThat(rules(rs, Names.setEndpointMark("eth0")))
                .containsExactly(GenericRule.of(new Target.SetMark(em.byName().get("eth0"))));
        assertThat(rules(rs, Names.FROM_ENDPOINT_MARK)).extracting(GenericRule::target).containsExactly(
                Target.RETURN, new Target.Goto(Names.fromWorkload("cali1")),
                new Target.Goto(Names.fromHostEndpointForward("eth0")), Target.DROP);
        assertThat(rules(rs, Names.OUTPUT).get(1)).isEqualTo(GenericRule.of(
                new Target.Goto(Names.FORWARD_ENDPOINT_MARK), new Match.MarkAnySet(mb.endpoint()))
                .withComment("forwarded through IPVS"));
        assertThat(iptables(List.of(rules(rs, Names.FROM_ENDPOINT_MARK).get(0)))).containsExactly(
                "-m comment --comment \"from no endpoint: no source policy\" -m mark --mark 0x80000/0xfff80000 -j RETURN");
    }

    @Test
    void aRangeChangeReRendersAndNoRangesLeaveOnlyTheServiceRule() {
        Ruleset one = RuleRenderer.render(model(Map.of("kubeNodePortRanges", "31000:31999"), true), V4);
        assertThat(iptables(rules(one, Names.FORWARD_CHECK)).get(1)).contains("--destination-ports 31000:31999");
        RenderCache cache = new RenderCache();
        DataplaneModel m = model(Map.of(), true);
        assertThat(iptables(rules(RuleRenderer.render(m, V4, cache), Names.FORWARD_CHECK)).get(1))
                .contains("--destination-ports 30000:32767");
        m.apply(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(Map.of("kubeNodePortRanges", "31000:31999"))));
        assertThat(iptables(rules(RuleRenderer.render(m, V4, cache), Names.FORWARD_CHECK)).get(1))
                .contains("--destination-ports 31000:31999");
    }

    @Test
    void endpointMarksAreStableAndRefuseAMaskTooSmall() {
        MarkBits mb = MarkBits.defaults();
        EndpointMarks two = EndpointMarks.allocate(mb, List.of("cali1", "eth0"));
        EndpointMarks three = EndpointMarks.allocate(mb, List.of("cali1", "eth0", "cali2"));
        assertThat(three.byName()).containsAllEntriesOf(two.byName());
        assertThat(EndpointMarks.spread(0b101, 0xf0)).isEqualTo(0x50);
        assertThatThrownBy(() -> EndpointMarks.allocate(MarkBits.fromMask(0xf0), List.of("a", "b")))
                .hasMessageContaining("iptablesMarkMask");
    }
}
