package calico.felix.calc;

import static calico.felix.calc.Res.hep;
import static calico.felix.calc.Res.tier;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.GlobalNetworkPolicy;
import calico.api.model.GlobalNetworkPolicySpec;
import calico.api.model.ObjectMeta;
import calico.api.model.PolicyType;
import calico.api.model.Rule;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** A host endpoint's policies split by kind, as Calico's event sequencer splits them. */
class HostEndpointKindsTest {

    private static GlobalNetworkPolicy policy(String name, Boolean dnt, Boolean preDnat, Boolean forward,
                                              PolicyType... types) {
        return new GlobalNetworkPolicy(ObjectMeta.named(name), new GlobalNetworkPolicySpec("default", 1.0,
                List.of(Rule.allow()), types.length > 1 ? List.of(Rule.allow()) : List.of(), "role == 'up'",
                List.of(types), dnt, preDnat, forward, null, null, null));
    }

    private static List<String> names(DataplaneUpdate.HostEndpointUpdate h,
                                      Function<DataplaneUpdate.HostEndpointUpdate, List<TierPolicies>> list) {
        return list.apply(h).stream().flatMap(t -> t.policies().stream()).map(PolicyId::name).sorted().toList();
    }

    @Test
    void policiesGoToTheListOfTheirKind() {
        Harness h = new Harness("n1").put(tier("default", 1000.0, null),
                hep("up", "n1", "10.9.0.1", Map.of("role", "up")),
                policy("normal", null, null, null, PolicyType.Ingress, PolicyType.Egress),
                policy("fwd", null, null, true, PolicyType.Ingress, PolicyType.Egress),
                policy("dnt", true, null, true, PolicyType.Ingress, PolicyType.Egress),
                policy("pre", null, true, true, PolicyType.Ingress));
        DataplaneUpdate.HostEndpointUpdate u = h.state.hostEndpoints.get("up");
        assertThat(names(u, DataplaneUpdate.HostEndpointUpdate::ingress)).containsExactly("fwd", "normal");
        assertThat(names(u, DataplaneUpdate.HostEndpointUpdate::egress)).containsExactly("fwd", "normal");
        assertThat(names(u, DataplaneUpdate.HostEndpointUpdate::forwardIngress)).containsExactly("fwd");
        assertThat(names(u, DataplaneUpdate.HostEndpointUpdate::forwardEgress)).containsExactly("fwd");
        assertThat(names(u, DataplaneUpdate.HostEndpointUpdate::untrackedIngress)).containsExactly("dnt");
        assertThat(names(u, DataplaneUpdate.HostEndpointUpdate::untrackedEgress)).containsExactly("dnt");
        assertThat(names(u, DataplaneUpdate.HostEndpointUpdate::preDnatIngress)).containsExactly("pre");

        // Changing only a policy's kind moves it.
        h.put(policy("normal", true, null, true, PolicyType.Ingress, PolicyType.Egress));
        u = h.state.hostEndpoints.get("up");
        assertThat(names(u, DataplaneUpdate.HostEndpointUpdate::ingress)).containsExactly("fwd");
        assertThat(names(u, DataplaneUpdate.HostEndpointUpdate::untrackedIngress)).containsExactly("dnt", "normal");
    }
}
