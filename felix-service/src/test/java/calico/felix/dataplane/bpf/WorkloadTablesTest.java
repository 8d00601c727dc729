package calico.felix.dataplane.bpf;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.Action;
import calico.api.model.ResourceKind;
import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.FelixSettings;
import calico.felix.calc.IpSetType;
import calico.felix.calc.PolicyId;
import calico.felix.calc.TierPolicies;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The batch hint: a policy or profile change drops exactly the cached tables that name it, a
 * settings change drops all, set members and endpoints drop none; a table no endpoint used in a
 * compile goes. The tables' contents after changes: {@code BpfPacketTest} (policy edits through
 * the graph decide real packets) and {@code KernelBpfTest}.
 */
class WorkloadTablesTest {

    static final PolicyId A = new PolicyId("default", null, "a", ResourceKind.GLOBAL_NETWORK_POLICY);
    static final PolicyId B = new PolicyId("default", null, "b", ResourceKind.GLOBAL_NETWORK_POLICY);
    static final CompiledPolicy EMPTY = new CompiledPolicy(List.of(), List.of(), false);

    static WorkloadTables.Key key(PolicyId p, String profile, boolean inbound) {
        return new WorkloadTables.Key(List.of(new TierPolicies("default", Action.Deny, List.of(p), false)),
                List.of(profile), inbound);
    }

    static WorkloadTables filled() {
        WorkloadTables t = new WorkloadTables();
        for (boolean in : new boolean[] {true, false}) {
            t.put(key(A, "p1", in), new WorkloadTables.Table(List.of(), Set.of(), Set.of()));
            t.put(key(B, "p2", in), new WorkloadTables.Table(List.of(), Set.of(), Set.of()));
        }
        return t;
    }

    @Test
    void aBatchDropsWhatNamesWhatItChanged() {
        WorkloadTables t = filled();
        t.invalidate(List.of(new DataplaneUpdate.IpSetUpdate("s", IpSetType.NET, Set.of()),
                new DataplaneUpdate.InSync()));
        assertThat(t.size()).as("set members do not enter a table").isEqualTo(4);

        t.invalidate(List.of(new DataplaneUpdate.ActivePolicyUpdate(A, EMPTY)));
        assertThat(t.get(key(A, "p1", true))).isNull();
        assertThat(t.get(key(A, "p1", false))).isNull();
        assertThat(t.get(key(B, "p2", true))).isNotNull();

        t = filled();
        t.invalidate(List.of(new DataplaneUpdate.ActiveProfileRemove("p2")));
        assertThat(t.size()).isEqualTo(2);
        assertThat(t.get(key(B, "p2", false))).isNull();

        t = filled();
        t.invalidate(List.of(new DataplaneUpdate.ActivePolicyRemove(B)));
        assertThat(t.get(key(B, "p2", true))).isNull();
        assertThat(t.get(key(A, "p1", true))).isNotNull();

        t = filled();
        t.invalidate(List.of(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(Map.of()))));
        assertThat(t.size()).as("settings: everything").isZero();

        t = filled();
        t.retainOnly(Set.of(key(A, "p1", true)));
        assertThat(t.size()).isEqualTo(1);
    }
}
