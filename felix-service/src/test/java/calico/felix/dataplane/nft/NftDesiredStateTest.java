package calico.felix.dataplane.nft;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.Action;
import calico.api.model.ResourceKind;
import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.PolicyId;
import calico.felix.calc.TierPolicies;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.RenderCache;
import calico.felix.dataplane.rules.RuleRenderer;
import calico.felix.dataplane.rules.Ruleset;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Endpoint chains alike (the replicas of a deployment) are formatted once: their rules are one
 * list in the desired table, equal to what each would be formatted to alone.
 */
class NftDesiredStateTest {

    private static final Set<IpFamily> BOTH = Set.of(IpFamily.V4, IpFamily.V6);

    private static PolicyId id(int i) {
        return new PolicyId("default", null, "p" + i, ResourceKind.GLOBAL_NETWORK_POLICY);
    }

    @Test
    void endpointChainsAlikeAreFormattedOnceAndAsEachAlone() {
        DataplaneModel model = new DataplaneModel();
        model.apply(new DataplaneUpdate.ActivePolicyUpdate(id(1), new CompiledPolicy(List.of(), List.of(), false)));
        model.apply(new DataplaneUpdate.ActiveProfileUpdate("prof", new CompiledPolicy(List.of(), List.of(), false)));
        List<TierPolicies> tiers = List.of(new TierPolicies("default", Action.Deny, List.of(id(1), id(2)), false));
        for (int i = 0; i < 3; i++) {
            model.apply(new DataplaneUpdate.WorkloadEndpointUpdate("ns/w" + i, "caliw" + i, null,
                    List.of("10.0.0." + (i + 1) + "/32"), List.of(), List.of("prof"), tiers, tiers));
        }
        RenderCache cache = new RenderCache();
        NftDesiredState desired = new NftDesiredState(m -> RuleRenderer.render(m, BOTH, cache), null);
        NftTable d = desired.render(model);

        String w0 = NftNames.chain(Ruleset.Table.FILTER, "cali-tw-caliw0");
        assertThat(d.chains().get(w0).rules())
                .isSameAs(d.chains().get(NftNames.chain(Ruleset.Table.FILTER, "cali-tw-caliw1")).rules())
                .isSameAs(d.chains().get(NftNames.chain(Ruleset.Table.FILTER, "cali-tw-caliw2")).rules());
        // The same table as each chain formatted on its own (no cache, no sharing).
        NftTable alone = new NftDesiredState(m -> RuleRenderer.render(m, BOTH), null).render(model);
        assertThat(d).isEqualTo(alone);

        // One endpoint changes: it leaves the shared list, the others keep it.
        List<TierPolicies> other = List.of(new TierPolicies("default", Action.Deny, List.of(id(1)), false));
        model.apply(new DataplaneUpdate.WorkloadEndpointUpdate("ns/w2", "caliw2", null, List.of("10.0.0.3/32"),
                List.of(), List.of("prof"), other, tiers));
        NftTable next = desired.render(model);
        assertThat(next.chains().get(NftNames.chain(Ruleset.Table.FILTER, "cali-tw-caliw2")).rules())
                .isNotEqualTo(next.chains().get(w0).rules());
        assertThat(next.chains().get(NftNames.chain(Ruleset.Table.FILTER, "cali-tw-caliw1")).rules())
                .isSameAs(next.chains().get(w0).rules());
        assertThat(next).isEqualTo(new NftDesiredState(m -> RuleRenderer.render(m, BOTH), null).render(model));
    }
}
