package calico.felix.app;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.Action;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.CompiledRule;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.DataplaneUpdate.ActivePolicyRemove;
import calico.felix.calc.DataplaneUpdate.ActivePolicyUpdate;
import calico.felix.calc.DataplaneUpdate.InSync;
import calico.felix.calc.DataplaneUpdate.IpSetDeltaUpdate;
import calico.felix.calc.DataplaneUpdate.IpSetRemove;
import calico.felix.calc.DataplaneUpdate.IpSetUpdate;
import calico.felix.calc.DataplaneUpdate.RouteRemove;
import calico.felix.calc.DataplaneUpdate.RouteType;
import calico.felix.calc.DataplaneUpdate.RouteUpdate;
import calico.felix.calc.DataplaneUpdate.WorkloadEndpointRemove;
import calico.felix.calc.DataplaneUpdate.WorkloadEndpointUpdate;
import calico.felix.calc.IpSetMember;
import calico.felix.calc.IpSetType;
import calico.felix.calc.PolicyId;
import calico.felix.calc.TierPolicies;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The model dataplane applies the graph's protocol and rejects each kind of violation by
 * recording it (never throwing), leaving its state as it was before the bad update.
 */
class ModelDataplaneTest {

    private static final PolicyId POLICY = new PolicyId("default", null, "allow-db", ResourceKind.GLOBAL_NETWORK_POLICY);

    private final ModelDataplane model = new ModelDataplane();

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
        assertThat(model.ipSet("s1").members()).containsExactly(net("10.0.0.3/32"));
        assertThat(model.ipSetMemberCount()).isEqualTo(1);
        assertThat(model.policies()).containsOnlyKeys(POLICY);
        assertThat(model.workloadEndpoints()).containsOnlyKeys("ns1/web");
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
    void violationsAreRecordedAndSkippedNotThrown() {
        apply(new IpSetUpdate("s1", IpSetType.NET, Set.of(net("10.0.0.2/32"))),
                new ActivePolicyUpdate(POLICY, usingSet("s1")), endpoint(POLICY), new InSync());

        apply(new ActivePolicyUpdate(new PolicyId("default", null, "p2", ResourceKind.GLOBAL_NETWORK_POLICY),
                        usingSet("missing")),
                new IpSetRemove("s1"),
                new ActivePolicyRemove(POLICY),
                new IpSetDeltaUpdate("s1", Set.of(), Set.of(net("10.9.9.9/32"))),
                new IpSetDeltaUpdate("s1", Set.of(net("10.0.0.2/32")), Set.of()),
                new IpSetDeltaUpdate("nope", Set.of(net("10.0.0.4/32")), Set.of()),
                endpoint(new PolicyId("default", null, "ghost", ResourceKind.GLOBAL_NETWORK_POLICY)),
                new WorkloadEndpointRemove("ns1/other"),
                new RouteRemove("10.1.0.0/24"),
                new InSync());

        assertThat(model.errors()).containsExactly(
                "policy default/p2 refers to unknown IP set missing",
                "remove of IP set s1 still used by a rule",
                "remove of policy default/allow-db still used by an endpoint",
                "delta removes absent member 10.9.9.9/32 of IP set s1",
                "delta adds present member 10.0.0.2/32 to IP set s1",
                "delta for unknown IP set nope",
                "workload endpoint ns1/web refers to unknown policy default/ghost",
                "remove of unknown workload endpoint ns1/other",
                "remove of unknown route 10.1.0.0/24",
                "InSync received twice");
        assertThat(model.violations()).isEqualTo(10);
        // Nothing the bad updates touched changed.
        assertThat(model.ipSet("s1").members()).containsExactly(net("10.0.0.2/32"));
        assertThat(model.policies()).containsOnlyKeys(POLICY);
        assertThat(model.workloadEndpoints().get("ns1/web")).isEqualTo(endpoint(POLICY));
    }
}
