package calico.felix.dataplane.rules;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.Action;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.CompiledRule;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.DataplaneUpdate.ActivePolicyRemove;
import calico.felix.calc.DataplaneUpdate.ActivePolicyUpdate;
import calico.felix.calc.DataplaneUpdate.ActiveProfileRemove;
import calico.felix.calc.DataplaneUpdate.ActiveProfileUpdate;
import calico.felix.calc.DataplaneUpdate.ConfigUpdate;
import calico.felix.calc.DataplaneUpdate.InSync;
import calico.felix.calc.DataplaneUpdate.IpSetDeltaUpdate;
import calico.felix.calc.DataplaneUpdate.IpSetRemove;
import calico.felix.calc.DataplaneUpdate.IpSetUpdate;
import calico.felix.calc.DataplaneUpdate.RouteRemove;
import calico.felix.calc.DataplaneUpdate.RouteType;
import calico.felix.calc.DataplaneUpdate.RouteUpdate;
import calico.felix.calc.DataplaneUpdate.WorkloadEndpointRemove;
import calico.felix.calc.DataplaneUpdate.WorkloadEndpointUpdate;
import calico.felix.calc.FelixSettings;
import calico.felix.calc.IpSetMember;
import calico.felix.calc.IpSetType;
import calico.felix.calc.PolicyId;
import calico.felix.calc.TierPolicies;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The one dataplane model applies the graph's protocol, records each kind of violation (never
 * throwing) and gives each its one outcome (design/rules.md §0).
 */
class DataplaneModelTest {

    private static final PolicyId POLICY = new PolicyId("default", null, "allow-db", ResourceKind.GLOBAL_NETWORK_POLICY);

    private final DataplaneModel model = new DataplaneModel();

    private static IpSetMember net(String cidr) {
        return IpSetMember.net(Cidr.parse(cidr));
    }

    private static CompiledPolicy usingSet(String id) {
        CompiledRule.Side src = new CompiledRule.Side(List.of(), List.of(), List.of(), List.of(), List.of(id),
                List.of(), List.of(), List.of());
        return new CompiledPolicy(List.of(new CompiledRule(Action.Allow, null, null, null, null, null, src,
                CompiledRule.Side.ANY, null)), List.of(), false);
    }

    private static WorkloadEndpointUpdate endpoint(PolicyId... policies) {
        return new WorkloadEndpointUpdate("ns1/web", "caliweb", null, List.of("10.0.0.1/32"), List.of(), List.of(),
                List.of(new TierPolicies("default", Action.Deny, List.of(policies), false)), List.of());
    }

    private void apply(DataplaneUpdate... updates) {
        model.apply(List.of(updates));
    }

    @Test
    void aCorrectStreamIsAppliedInFull() {
        apply(new IpSetUpdate("s1", IpSetType.NET, Set.of(net("10.0.0.2/32"))),
                new ActivePolicyUpdate(POLICY, usingSet("s1")), endpoint(POLICY),
                new RouteUpdate("10.0.0.1/32", RouteType.LOCAL_WORKLOAD, "node-a", null, "caliweb", null, false),
                new InSync());
        apply(new IpSetDeltaUpdate("s1", Set.of(net("10.0.0.3/32")), Set.of(net("10.0.0.2/32"))));

        assertThat(model.errors()).isEmpty();
        assertThat(model.inSync()).isTrue();
        assertThat(model.ipSets().get("s1").members()).containsExactly(net("10.0.0.3/32"));
        assertThat(model.ipSetMemberCount()).isEqualTo(1);
        assertThat(model.policies()).containsOnlyKeys(POLICY);
        assertThat(model.workloads()).containsOnlyKeys("ns1/web");
        assertThat(model.routes()).containsOnlyKeys("10.0.0.1/32");

        // Teardown in the protocol's order: endpoint, policy, then its set.
        apply(new WorkloadEndpointRemove("ns1/web"), new ActivePolicyRemove(POLICY), new IpSetRemove("s1"),
                new RouteRemove("10.0.0.1/32"));
        assertThat(model.errors()).isEmpty();
        assertThat(model.ipSetCount()).isZero();
        assertThat(model.ipSetMemberCount()).isZero();
        assertThat(model.endpointCount()).isZero();
    }

    @Test
    void wireguardEndpointsAreFoldedByNodeAndAnUnknownRemoveIsAViolation() {
        var a = new DataplaneUpdate.WireguardEndpointUpdate("node-a", "hSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo=", null);
        apply(a, new DataplaneUpdate.WireguardEndpointUpdate("node-b", null, "10.244.1.1"),
                new DataplaneUpdate.WireguardEndpointRemove("node-b"));
        assertThat(model.wireguardEndpoints()).containsExactly(Map.entry("node-a", a));
        assertThat(model.errors()).isEmpty();

        apply(new DataplaneUpdate.WireguardEndpointRemove("node-c"));
        assertThat(model.errors()).containsExactly("remove of unknown WireGuard endpoint node-c");
    }

    @Test
    void theIpipTunnelAddressIsFoldedByNodeAndAnUnknownRemoveIsAViolation() {
        apply(new DataplaneUpdate.IpipTunnelAddressUpdate("node-a", "10.244.0.1"),
                new DataplaneUpdate.IpipTunnelAddressUpdate("node-a", "10.244.0.7"));
        assertThat(model.ipipTunnelAddress("node-a")).contains("10.244.0.7");
        assertThat(model.ipipTunnelAddress("node-b")).isEmpty();
        apply(new DataplaneUpdate.IpipTunnelAddressRemove("node-a"));
        assertThat(model.ipipTunnelAddress("node-a")).isEmpty();
        assertThat(model.errors()).isEmpty();
        apply(new DataplaneUpdate.IpipTunnelAddressRemove("node-a"));
        assertThat(model.errors()).containsExactly("remove of unknown IPIP tunnel address of node-a");
    }

    @Test
    void eachViolationIsRecordedWithItsOneOutcomeNoneThrows() {
        apply(new IpSetUpdate("s1", IpSetType.NET, Set.of(net("10.0.0.2/32"))),
                new ActivePolicyUpdate(POLICY, usingSet("s1")), endpoint(POLICY),
                new ActiveProfileUpdate("kns.a", new CompiledPolicy(List.of(), List.of(), false)),
                withProfile("ns1/p", "kns.a"), new InSync());
        PolicyId p2 = new PolicyId("default", null, "p2", ResourceKind.GLOBAL_NETWORK_POLICY);
        PolicyId ghost = new PolicyId("default", null, "ghost", ResourceKind.GLOBAL_NETWORK_POLICY);

        apply(new ActivePolicyUpdate(p2, usingSet("missing")),
                new IpSetDeltaUpdate("s1", Set.of(), Set.of(net("10.9.9.9/32"))),
                new IpSetDeltaUpdate("s1", Set.of(net("10.0.0.2/32")), Set.of()),
                new IpSetDeltaUpdate("nope", Set.of(net("10.0.0.4/32")), Set.of()),
                new IpSetRemove("s1"),
                new ActivePolicyRemove(POLICY),
                endpoint(ghost),
                withProfile("ns1/other", "kns.none"),
                new ActiveProfileRemove("kns.a"),
                new WorkloadEndpointRemove("ns1/gone"),
                new RouteRemove("10.1.0.0/24"),
                new InSync(),
                new ConfigUpdate(FelixSettings.from(Map.of("iptablesMarkMask", "0x1", "interfacePrefix", "tap"))));

        List<String> errors = model.errors();
        assertThat(errors.subList(0, 12)).containsExactly(
                "policy default/p2 refers to unknown IP set missing (programmed empty)",
                "delta removes absent member 10.9.9.9/32 of IP set s1",
                "delta adds present member 10.0.0.2/32 to IP set s1",
                "delta for unknown IP set nope (skipped)",
                "remove of IP set s1 still used by a rule (programmed empty)",
                "remove of policy default/allow-db still used by an endpoint (denies in its place)",
                "workload endpoint ns1/web refers to unknown policy default/ghost (denies in its place)",
                "workload endpoint ns1/other refers to unknown profile kns.none (skipped)",
                "remove of profile kns.a still used by an endpoint (skipped)",
                "remove of unknown workload endpoint ns1/gone",
                "remove of unknown route 10.1.0.0/24",
                "InSync received twice");
        assertThat(errors.get(12)).contains("iptablesMarkMask", "the previous rule settings and mark bits stay");
        assertThat(model.violations()).isEqualTo(13);
        // Applied: the renderer fails closed on what they name and the model lacks.
        assertThat(model.policies()).containsOnlyKeys(p2);
        assertThat(model.ipSets()).isEmpty();
        assertThat(model.ipSetMemberCount()).isZero();
        assertThat(model.workloads().get("ns1/web")).isEqualTo(endpoint(ghost));
        // Skipped: a jump to a profile chain that does not exist would fail every write.
        assertThat(model.workloads()).containsOnlyKeys("ns1/web", "ns1/p");
        assertThat(model.profiles()).containsOnlyKeys("kns.a");
        // The rest of a config with an unusable mark mask applies; the mark bits stay.
        assertThat(model.marks()).isEqualTo(MarkBits.defaults());
        assertThat(model.interfacePrefixes()).containsExactly("tap");
    }

    @Test
    void aDriverSeesEachPolicyAsItWasBeforeTheLastBatch() {
        CompiledPolicy first = usingSet("s1");
        CompiledPolicy second = new CompiledPolicy(List.of(), List.of(), false);
        apply(new IpSetUpdate("s1", IpSetType.NET, Set.of()), new ActivePolicyUpdate(POLICY, first));
        assertThat(model.policyBeforeLastApply(POLICY)).as("absent before the batch that added it").isNull();

        apply(new ActivePolicyUpdate(POLICY, second), new ActivePolicyUpdate(POLICY, first),
                new ActivePolicyUpdate(POLICY, second));
        assertThat(model.policyBeforeLastApply(POLICY)).as("before the batch, not before its last update")
                .isSameAs(first);
        assertThat(model.policies().get(POLICY)).isSameAs(second);

        apply(new IpSetDeltaUpdate("s1", Set.of(net("10.0.0.9/32")), Set.of()));
        assertThat(model.policyBeforeLastApply(POLICY)).as("unchanged by the last batch: as now").isSameAs(second);
        assertThat(model.version()).isEqualTo(3);
    }

    private static WorkloadEndpointUpdate withProfile(String id, String profile) {
        return new WorkloadEndpointUpdate(id, "cali" + id.hashCode(), null, List.of("10.0.0.7/32"), List.of(),
                List.of(profile), List.of(), List.of());
    }
}
