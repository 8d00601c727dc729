package calico.felix.calc;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.api.model.Action;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The test dataplane must reject every protocol violation, or the graph tests prove nothing. */
class DataplaneStateTest {

    private static final IpSetMember M = IpSetMember.net(Cidr.parse("10.0.0.1/32"));
    private static final PolicyId P = new PolicyId("default", null, "p", ResourceKind.GLOBAL_NETWORK_POLICY);

    private static CompiledPolicy using(String setId) {
        CompiledRule.Side src = new CompiledRule.Side(List.of(), List.of(), List.of(), List.of(), List.of(setId),
                List.of(), List.of(), List.of());
        return new CompiledPolicy(List.of(new CompiledRule(Action.Allow, null, null, null, null, null, src,
                CompiledRule.Side.ANY, null)), List.of(), false);
    }

    @Test
    void aRuleNamingAnUnknownIpSetIsRejected() {
        assertThatThrownBy(() -> new DataplaneState().apply(new DataplaneUpdate.ActivePolicyUpdate(P, using("s:x"))))
                .isInstanceOf(AssertionError.class).hasMessageContaining("unknown IP set s:x");
    }

    @Test
    void aDeltaOnAnUnknownSetOrAbsentMemberIsRejected() {
        DataplaneState s = new DataplaneState();
        assertThatThrownBy(() -> s.apply(new DataplaneUpdate.IpSetDeltaUpdate("s:x", Set.of(M), Set.of())))
                .isInstanceOf(AssertionError.class);
        s.apply(new DataplaneUpdate.IpSetUpdate("s:x", IpSetType.NET, Set.of()));
        assertThatThrownBy(() -> s.apply(new DataplaneUpdate.IpSetDeltaUpdate("s:x", Set.of(), Set.of(M))))
                .isInstanceOf(AssertionError.class);
    }

    @Test
    void removingASetStillInUseIsRejected() {
        DataplaneState s = new DataplaneState();
        s.apply(List.of(new DataplaneUpdate.IpSetUpdate("s:x", IpSetType.NET, Set.of(M)),
                new DataplaneUpdate.ActivePolicyUpdate(P, using("s:x"))));
        assertThatThrownBy(() -> s.apply(new DataplaneUpdate.IpSetRemove("s:x")))
                .isInstanceOf(AssertionError.class).hasMessageContaining("still in use");
    }

    @Test
    void anEndpointNamingAnUnknownPolicyOrProfileIsRejected() {
        DataplaneState s = new DataplaneState();
        assertThatThrownBy(() -> s.apply(new DataplaneUpdate.WorkloadEndpointUpdate("ns/a", "cali1", null, List.of(),
                List.of(), List.of(), List.of(new TierPolicies("default", Action.Deny, List.of(P), false)), List.of())))
                .isInstanceOf(AssertionError.class).hasMessageContaining("unknown policy");
        assertThatThrownBy(() -> s.apply(new DataplaneUpdate.WorkloadEndpointUpdate("ns/a", "cali1", null, List.of(),
                List.of(), List.of("kns.ns"), List.of(), List.of())))
                .isInstanceOf(AssertionError.class).hasMessageContaining("unknown profile");
    }
}
