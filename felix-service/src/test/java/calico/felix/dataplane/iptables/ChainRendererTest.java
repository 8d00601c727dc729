package calico.felix.dataplane.iptables;

import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.MarkBits;
import calico.felix.dataplane.rules.Names;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.api.model.Action;
import calico.api.model.ResourceKind;
import calico.api.model.Rule;
import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.CompiledRule;
import calico.felix.calc.CompiledRule.Side;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.PolicyId;
import calico.felix.calc.TierPolicies;
import calico.felix.calc.FelixSettings;
import calico.felix.dataplane.rules.RuleRenderer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The renderer without a kernel: names, chain structure, and every compiled-rule feature. */
class ChainRendererTest {

    private final RuleRenderer renderer = new RuleRenderer(MarkBits.defaults(), List.of("cali"), Set.of(IpFamily.V4));
    private final IptablesFormatter formatter = new IptablesFormatter(IpFamily.V4);
    private final Map<String, Set<String>> netSets = new HashMap<>();

    private static FelixSettings settings(String field, String value) {
        return FelixSettings.from(Map.of(field, value));
    }

    private static PolicyId gnp(String tier, String name) {
        return new PolicyId(tier, null, name, ResourceKind.GLOBAL_NETWORK_POLICY);
    }

    private static Side side(List<String> nets, List<String> notNets, List<String> ports, List<String> notPorts,
                             List<String> sets, List<String> notSets, List<String> named, List<String> notNamed) {
        return new Side(nets, notNets, ports, notPorts, sets, notSets, named, notNamed);
    }

    private static CompiledRule rule(Action a, String proto, Side src, Side dst) {
        return new CompiledRule(a, null, proto, null, null, null, src, dst, null);
    }

    private List<String> render(CompiledRule r) {
        return renderer.rule(r).stream().flatMap(g -> formatter.rule(g, netSets).stream())
                .map(calico.dataplane.iptables.Rule::render).toList();
    }

    @Test
    void shortNamesAreKeptAndLongOnesHashedToTheLimit() {
        assertThat(Names.policyInbound(gnp("default", "allow-db"))).isEqualTo("cali-pi-default/allow-db");
        assertThat(Names.toWorkload("cali1234abcd")).isEqualTo("cali-tw-cali1234abcd");
        assertThat(Names.profileOutbound("kns.test")).isEqualTo("cali-pro-kns.test");
        String longName = Names.policyInbound(gnp("default", "a-rather-long-policy-name"));
        assertThat(longName).hasSize(28).startsWith("cali-pi-_");
        assertThat(longName).isEqualTo(Names.policyInbound(gnp("default", "a-rather-long-policy-name")));
        assertThat(longName).isNotEqualTo(Names.policyInbound(gnp("default", "a-rather-long-policy-name2")));
        assertThat(Names.policyOutbound(gnp("default", "a-rather-long-policy-name"))).startsWith("cali-po-_").hasSize(28);
        // Namespaced and global policies of one name get different chains.
        assertThat(Names.policyInbound(new PolicyId("default", "ns", "p", ResourceKind.NETWORK_POLICY)))
                .isEqualTo("cali-pi-default/ns/p");
        // Exactly 28 characters fits, unless it could be mistaken for a hashed name.
        assertThat(Names.limited("cali-pi-", "a".repeat(20), 28)).isEqualTo("cali-pi-" + "a".repeat(20));
        assertThat(Names.limited("cali-pi-", "_" + "a".repeat(19), 28)).startsWith("cali-pi-_").hasSize(28)
                .isNotEqualTo("cali-pi-_" + "a".repeat(19));
        assertThat(Names.ipSetV4("s:abc")).hasSize(31).startsWith("cali40").isNotEqualTo(Names.ipSetV4("s:abd"));
    }

    @Test
    void markBitsAreTheMasksLowestTwoBits() {
        assertThat(MarkBits.defaults()).isEqualTo(new MarkBits(0x10000, 0x20000, 0x40000, 0xfff80000L));
        assertThat(MarkBits.fromMask(settings("iptablesMarkMask", "0xf0").iptablesMarkMask()))
                .isEqualTo(new MarkBits(0x10, 0x20, 0x40, 0x80));
        assertThat(MarkBits.fromMask(settings("iptablesMarkMask", "4026531840").iptablesMarkMask()))
                .isEqualTo(new MarkBits(0x10000000, 0x20000000, 0x40000000, 0x80000000L));
        assertThatThrownBy(() -> MarkBits.fromMask(0x1)).hasMessageContaining("iptablesMarkMask");
        // Text that is no mask is refused once, where the settings are read, naming the variable.
        assertThat(calico.felix.calc.ConfigResolver.validateEnvironment(Map.of("FELIX_IPTABLESMARKMASK", "zz")))
                .singleElement().asString().contains("FELIX_IPTABLESMARKMASK (iptablesMarkMask)", "zz");
    }

    @Test
    void endpointChainEvaluatesTiersInOrderThenProfiles() {
        PolicyId p1 = gnp("t1", "p1");
        PolicyId p2 = gnp("t1", "p2");
        PolicyId staged = new PolicyId("t1", null, "s", ResourceKind.STAGED_GLOBAL_NETWORK_POLICY);
        PolicyId p3 = gnp("t2", "p3");
        PolicyId onlyStaged = new PolicyId("t3", null, "s3", ResourceKind.STAGED_GLOBAL_NETWORK_POLICY);
        List<TierPolicies> tiers = List.of(
                new TierPolicies("t1", Action.Deny, List.of(p1, staged, p2), false),
                new TierPolicies("t2", Action.Pass, List.of(p3), false),
                new TierPolicies("t3", Action.Deny, List.of(onlyStaged), false));
        Chain c = formatter.chain(renderer.endpointChain("cali-tw-caliX", tiers, List.of("kns.a", "kns.b"), true,
                Set.of(p1, p2, p3)), netSets);
        assertThat(c.rules().stream().map(calico.dataplane.iptables.Rule::render)).containsExactly(
                "-j MARK --set-xmark 0x0/0x30000",
                "-m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT",
                "-m conntrack --ctstate INVALID -j DROP",
                "-m comment --comment \"start of tier t1\" -j MARK --set-xmark 0x0/0x20000",
                // a tier's policies are skipped once one decided (pass or accept); an accept returns at its end
                "-m mark --mark 0x0/0x30000 -j cali-pi-t1/p1",
                "-m mark --mark 0x0/0x30000 -j cali-pi-t1/p2",
                "-m mark --mark 0x10000/0x10000 -j RETURN",
                "-m comment --comment \"end of tier t1\" -m mark --mark 0x0/0x20000 -j DROP",
                "-m comment --comment \"start of tier t2\" -j MARK --set-xmark 0x0/0x20000",
                "-m mark --mark 0x0/0x30000 -j cali-pi-t2/p3",
                "-m mark --mark 0x10000/0x10000 -j RETURN",
                // t2's default is Pass: no drop; t3 has only staged policies: not enforced
                "-j cali-pri-kns.a",
                "-m mark --mark 0x10000/0x10000 -j RETURN",
                "-j cali-pri-kns.b",
                "-m mark --mark 0x10000/0x10000 -j RETURN",
                "-m comment --comment \"no policy or profile accepted\" -j DROP");
    }

    @Test
    void egressUsesOutboundChainsAndMissingPoliciesOrTiersFailClosed() {
        PolicyId p1 = gnp("t1", "p1");
        PolicyId gone = gnp("t1", "gone");
        Chain c = formatter.chain(renderer.endpointChain("cali-fw-caliX",
                List.of(new TierPolicies("t1", null, List.of(p1, gone), false),
                        new TierPolicies("nope", Action.Pass, List.of(), true)),
                List.of("kns.a"), false, Set.of(p1)), netSets);
        assertThat(c.rules().stream().map(calico.dataplane.iptables.Rule::render)).contains(
                "-m mark --mark 0x0/0x30000 -j cali-po-t1/p1",
                "-j cali-pro-kns.a").containsSubsequence(
                "-m mark --mark 0x0/0x30000 -j cali-po-t1/p1",
                "-m comment --comment \"missing policy gone\" -m mark --mark 0x0/0x30000 -j DROP",
                "-m mark --mark 0x10000/0x10000 -j RETURN",
                "-m comment --comment \"end of tier t1\" -m mark --mark 0x0/0x20000 -j DROP", // null = Deny
                "-m comment --comment \"start of tier nope\" -j MARK --set-xmark 0x0/0x20000",
                // missing tier: deny even though it says Pass
                "-m comment --comment \"end of tier nope\" -m mark --mark 0x0/0x20000 -j DROP");
    }

    @Test
    void forwardAndDispatchChainsRouteByInterface() {
        DataplaneModel m = new DataplaneModel();
        m.apply(new DataplaneUpdate.WorkloadEndpointUpdate("ns/a", "caliA", null, List.of("10.0.0.1/32"), List.of(),
                List.of(), List.of(), List.of()));
        m.apply(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(Map.of("iptablesMarkMask", "0xff000000", "interfacePrefix", "tap,cali"))));
        Map<String, Chain> chains = ChainRenderer.render(m).chains();
        assertThat(chains).containsOnlyKeys("cali-FORWARD", "cali-from-wl-dispatch", "cali-to-wl-dispatch",
                "cali-tw-caliA", "cali-fw-caliA", "cali-INPUT", "cali-OUTPUT", "cali-wl-to-host", "cali-failsafe-in",
                "cali-failsafe-out", "cali-from-host-endpoint", "cali-to-host-endpoint", "cali-from-hep-forward",
                "cali-to-hep-forward");
        assertThat(chains.get("cali-FORWARD").rules().stream().map(calico.dataplane.iptables.Rule::render))
                .containsExactly("-j MARK --set-xmark 0x0/0x6000000",
                        "-m mark --mark 0x0/0x1000000 -j cali-from-hep-forward",
                        "-i tap+ -j cali-from-wl-dispatch", "-i cali+ -j cali-from-wl-dispatch",
                        "-o tap+ -j cali-to-wl-dispatch", "-o cali+ -j cali-to-wl-dispatch", "-j cali-to-hep-forward",
                        "-m comment --comment \"policy accepted the packet\" -m mark --mark 0x1000000/0x1000000 -j ACCEPT",
                        "-m comment --comment \"forwarded: mangle POSTROUTING leaves it to the forward policy\" "
                                + "-j MARK --set-xmark 0x1000000/0x1000000");
        assertThat(chains.get("cali-from-wl-dispatch").rules().stream().map(calico.dataplane.iptables.Rule::render))
                .containsExactly("-i caliA -g cali-fw-caliA", "-j DROP");
        assertThat(chains.get("cali-to-wl-dispatch").rules().stream().map(calico.dataplane.iptables.Rule::render))
                .containsExactly("-o caliA -g cali-tw-caliA", "-j DROP");
    }

    @Test
    void modelRendersPolicyAndProfileChainsButNotStagedOnes() {
        DataplaneModel m = new DataplaneModel();
        CompiledPolicy allow = new CompiledPolicy(List.of(rule(Action.Allow, null, Side.ANY, Side.ANY)), List.of(), false);
        m.apply(new DataplaneUpdate.ActivePolicyUpdate(gnp("default", "p"), allow));
        m.apply(new DataplaneUpdate.ActivePolicyUpdate(
                new PolicyId("default", null, "s", ResourceKind.STAGED_GLOBAL_NETWORK_POLICY), allow));
        m.apply(new DataplaneUpdate.ActiveProfileUpdate("kns.x", allow));
        assertThat(ChainRenderer.render(m).chains()).containsKeys("cali-pi-default/p", "cali-po-default/p",
                "cali-pri-kns.x", "cali-pro-kns.x").doesNotContainKey("cali-pi-default/s");
        assertThat(ChainRenderer.render(m).chains().get("cali-pi-default/p").rules().stream()
                .map(calico.dataplane.iptables.Rule::render))
                .containsExactly("-j MARK --set-xmark 0x10000/0x10000", "-m mark --mark 0x10000/0x10000 -j RETURN");
    }

    @Test
    void actionsRenderAsCalicoDoes() {
        assertThat(render(rule(Action.Deny, null, Side.ANY, Side.ANY))).containsExactly("-j DROP");
        assertThat(render(rule(Action.Pass, null, Side.ANY, Side.ANY))).containsExactly(
                "-j MARK --set-xmark 0x20000/0x20000", "-m mark --mark 0x20000/0x20000 -j RETURN");
        assertThat(render(rule(Action.Log, null, Side.ANY, Side.ANY))).containsExactly(
                "-j LOG --log-prefix \"calico-packet: \" --log-level 5");
    }

    @Test
    void protocolPortsAndSetsRender() {
        Side dst = side(List.of(), List.of(), List.of("80", "8000:8080"), List.of("8005"), List.of("s:dst"),
                List.of("s:notdst"), List.of(), List.of());
        Side src = side(List.of("10.0.0.0/8"), List.of("10.1.0.0/16"), List.of(), List.of(), List.of(), List.of(),
                List.of(), List.of());
        String ds = Names.ipSetV4("s:dst");
        String nds = Names.ipSetV4("s:notdst");
        assertThat(render(rule(Action.Deny, "TCP", src, dst))).containsExactly(
                "-p tcp -s 10.0.0.0/8 -m set ! --match-set " + Names.netsSet(IpFamily.V4, List.of("10.1.0.0/16")) + " src"
                        + " -m set --match-set " + ds + " dst"
                        + " -m set ! --match-set " + nds + " dst -m multiport ! --destination-ports 8005"
                        + " -m multiport --destination-ports 80,8000:8080 -j DROP");
        // -s and ! -s cannot share a rule, so the negated net became a set.
        assertThat(netSets).containsEntry(Names.netsSet(IpFamily.V4, List.of("10.1.0.0/16")), Set.of("10.1.0.0/16"));
    }

    @Test
    void singleNotNetUsesNegatedAddressAndSeveralNetsUseASet() {
        Side src = side(List.of(), List.of("10.1.0.0/16"), List.of(), List.of(), List.of(), List.of(), List.of(), List.of());
        assertThat(render(rule(Action.Deny, null, src, Side.ANY))).containsExactly("! -s 10.1.0.0/16 -j DROP");
        Side dst = side(List.of("10.2.0.0/16", "10.1.0.0/16"), List.of(), List.of(), List.of(), List.of(), List.of(),
                List.of(), List.of());
        String set = Names.netsSet(IpFamily.V4, List.of("10.1.0.0/16", "10.2.0.0/16"));
        assertThat(render(rule(Action.Deny, null, Side.ANY, dst))).containsExactly(
                "-m set --match-set " + set + " dst -j DROP");
        assertThat(netSets.get(set)).containsExactlyInAnyOrder("10.1.0.0/16", "10.2.0.0/16");
    }

    @Test
    void numericPortsAndNamedPortSetsAreAlternatives() {
        Side dst = side(List.of(), List.of(), List.of("443"), List.of(), List.of(), List.of(), List.of("n:web"),
                List.of("n:admin"));
        Side src = side(List.of(), List.of(), List.of("1000:2000"), List.of(), List.of(), List.of(), List.of(), List.of());
        String web = Names.ipSetV4("n:web");
        String admin = Names.ipSetV4("n:admin");
        assertThat(render(rule(Action.Allow, "UDP", src, dst))).containsExactly(
                "-p udp -m set ! --match-set " + admin + " dst,dst -m multiport --source-ports 1000:2000"
                        + " -m multiport --destination-ports 443 -j MARK --set-xmark 0x10000/0x10000",
                "-p udp -m set ! --match-set " + admin + " dst,dst -m multiport --source-ports 1000:2000"
                        + " -m set --match-set " + web + " dst,dst -j MARK --set-xmark 0x10000/0x10000",
                "-m mark --mark 0x10000/0x10000 -j RETURN");
    }

    @Test
    void moreThanFifteenPortsAreSplitAcrossMultiportMatches() {
        List<String> ports = new ArrayList<>(IntStream.rangeClosed(1, 14).mapToObj(Integer::toString).toList());
        ports.add("100:200"); // a range counts twice: 14 + 2 > 15
        Side dst = side(List.of(), List.of(), ports, List.of(), List.of(), List.of(), List.of(), List.of());
        List<String> out = render(rule(Action.Deny, "TCP", Side.ANY, dst));
        assertThat(out).containsExactly(
                "-p tcp -m multiport --destination-ports 1,2,3,4,5,6,7,8,9,10,11,12,13,14 -j DROP",
                "-p tcp -m multiport --destination-ports 100:200 -j DROP");
    }

    @Test
    void icmpProtocolNegationAndIpVersion() {
        CompiledRule icmp = new CompiledRule(Action.Allow, 4, "ICMP", null, new Rule.IcmpFields(8, 0),
                new Rule.IcmpFields(3, null), Side.ANY, Side.ANY, null);
        assertThat(render(icmp).get(0)).isEqualTo(
                "-p icmp -m icmp --icmp-type 8/0 -m icmp ! --icmp-type 3 -j MARK --set-xmark 0x10000/0x10000");
        CompiledRule notTcp = new CompiledRule(Action.Deny, null, null, "TCP", null, null, Side.ANY, Side.ANY, null);
        assertThat(render(notTcp)).containsExactly("! -p tcp -j DROP");
        CompiledRule v6 = new CompiledRule(Action.Deny, 6, null, null, null, null, Side.ANY, Side.ANY, null);
        assertThat(render(v6)).isEmpty();
        CompiledRule sets = rule(Action.Deny, null, side(List.of(), List.of(), List.of(), List.of(), List.of("s:a"),
                List.of("s:b"), List.of(), List.of()), Side.ANY);
        assertThat(render(sets)).containsExactly("-m set --match-set " + Names.ipSetV4("s:a") + " src -m set ! --match-set "
                + Names.ipSetV4("s:b") + " src -j DROP");
    }

    private static List<String> rendered(Map<String, Chain> chains, String name) {
        return chains.get(name).rules().stream().map(calico.dataplane.iptables.Rule::render).toList();
    }

    @Test
    void hostSideChainsFormatPerFamilyAndTable() {
        DataplaneModel m = new DataplaneModel();
        m.apply(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(Map.of("failsafeInboundHostPorts", "tcp:22,udp:[fd00::/8]:68"))));
        m.apply(new DataplaneUpdate.HostEndpointUpdate("n/eth0", "eth0", List.of(), List.of(), List.of(), List.of(),
                List.of()));
        m.apply(new DataplaneUpdate.IpPoolUpdate("p", "10.65.0.0/16", true, "Never", "Never", false));
        ChainRenderer.Rendered v4 = ChainRenderer.render(m, IpFamily.V4);
        ChainRenderer.Rendered v6 = ChainRenderer.render(m, IpFamily.V6);

        assertThat(rendered(v4.chains(), Names.INPUT)).containsExactly("-i cali+ -g cali-wl-to-host",
                "-m comment --comment \"untracked or pre-DNAT policy accepted the packet\" -m mark --mark 0x10000/0x10000 -j ACCEPT",
                "-j MARK --set-xmark 0x0/0x70000", "-j cali-from-host-endpoint",
                "-m comment --comment \"host endpoint policy accepted the packet\" -m mark --mark 0x10000/0x10000 -j ACCEPT");
        // Interfaces without a host endpoint fall through: no final rule.
        assertThat(rendered(v4.chains(), Names.FROM_HOST_DISPATCH)).containsExactly("-i eth0 -g cali-fh-eth0");
        assertThat(rendered(v4.chains(), Names.TO_HOST_DISPATCH)).containsExactly("-o eth0 -g cali-th-eth0");
        assertThat(rendered(v4.chains(), Names.FAILSAFE_IN)).containsExactly(
                "-m comment --comment \"failsafe tcp:22\" -p tcp -m multiport --destination-ports 22 -j ACCEPT");
        assertThat(rendered(v6.chains(), Names.FAILSAFE_IN)).containsExactly(
                "-m comment --comment \"failsafe tcp:22\" -p tcp -m multiport --destination-ports 22 -j ACCEPT",
                "-m comment --comment \"failsafe udp:68\" -p udp -s fd00::/8 -m multiport --destination-ports 68 -j ACCEPT");
        assertThat(rendered(v4.chains(), Names.WL_TO_HOST)).containsExactly("-j cali-from-wl-dispatch",
                "-m comment --comment defaultEndpointToHostAction -j DROP");
        assertThat(rendered(v6.chains(), Names.WL_TO_HOST)).contains(
                "-p ipv6-icmp -m icmp6 --icmpv6-type 135 -j ACCEPT", "-p ipv6-icmp -m icmp6 --icmpv6-type 133 -j ACCEPT");

        Map<String, Chain> nat4 = v4.chains(calico.dataplane.iptables.Table.NAT);
        assertThat(rendered(nat4, Names.POSTROUTING)).containsExactly("-j cali-nat-outgoing");
        assertThat(rendered(nat4, Names.NAT_OUTGOING)).containsExactly("-m comment --comment natOutgoing "
                + "-m set --match-set cali40masq-ipam-pools src -m set ! --match-set cali40all-ipam-pools dst "
                + "-j MASQUERADE --random-fully");
        assertThat(rendered(v6.chains(calico.dataplane.iptables.Table.NAT), Names.NAT_OUTGOING)).isEmpty();
    }

    @Test
    void natPortRangeAndHostExclusionInIptablesSyntax() {
        DataplaneModel m = new DataplaneModel();
        m.apply(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(Map.of("natPortRange", "32768:33000",
                "natOutgoingExclusions", "IPPoolsAndHostIPs"))));
        m.apply(new DataplaneUpdate.IpPoolUpdate("p", "10.65.0.0/16", true, "Never", "Never", false));
        String leaving = "-m comment --comment natOutgoing -m set --match-set cali40masq-ipam-pools src "
                + "-m set ! --match-set cali40all-ipam-pools dst -m set ! --match-set cali40all-hosts-net dst";
        assertThat(rendered(ChainRenderer.render(m, IpFamily.V4).chains(calico.dataplane.iptables.Table.NAT),
                Names.NAT_OUTGOING)).containsExactly(
                leaving + " -p tcp -j MASQUERADE --to-ports 32768-33000 --random-fully", leaving + " -p tcp -j RETURN",
                leaving + " -p udp -j MASQUERADE --to-ports 32768-33000 --random-fully", leaving + " -p udp -j RETURN",
                leaving + " -j MASQUERADE --random-fully");
    }
}
