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
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.NflogPrefix.Verdict;
import calico.felix.dataplane.rules.RuleHit.Owner;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class NflogPrefixTest {

    static final PolicyId NP = new PolicyId("default", "namespace1", "default.policy", ResourceKind.NETWORK_POLICY);

    @Test
    void shortPrefixesFollowCalicosScheme() {
        assertThat(NflogPrefix.policyRule(Verdict.ALLOW, true, 0, NP)).isEqualTo("API0|np/namespace1/default.policy");
        assertThat(NflogPrefix.profileRule(Verdict.PASS, false, 999, "short.profile.name"))
                .isEqualTo("PRE999|pro/short.profile.name");
        assertThat(NflogPrefix.policyRule(Verdict.DENY, false, 3, new PolicyId("t1", null, "g",
                ResourceKind.GLOBAL_NETWORK_POLICY))).isEqualTo("DPE3|gnp/g");
        assertThat(NflogPrefix.endOfTier(Verdict.DENY, true, "security")).isEqualTo("DPI|security");
        assertThat(NflogPrefix.noProfileMatched(false)).isEqualTo("DRE");
    }

    @Test
    void longPrefixesAreHashedToExactly63BytesKeepingBothEnds() {
        String name = "a".repeat(40) + "-tail-0123456789";
        PolicyId id = new PolicyId("default", "some-namespace", name, ResourceKind.NETWORK_POLICY);
        String p = NflogPrefix.policyRule(Verdict.DENY, true, 12, id);
        assertThat(p.getBytes(StandardCharsets.UTF_8)).hasSize(63);
        assertThat(p).startsWith("DPI12|np/s").endsWith("0123456789").contains("_");
        assertThat(NflogPrefix.hashed(p)).isTrue();
        // A different rule index hashes differently; the same input always the same.
        assertThat(NflogPrefix.policyRule(Verdict.DENY, true, 13, id)).isNotEqualTo(p);
        assertThat(NflogPrefix.policyRule(Verdict.DENY, true, 12, id)).isEqualTo(p);
        // 62 bytes stay as they are; 63 are hashed (a 63-byte name cannot pose as a hash).
        String at62 = "API0|gnp/" + "x".repeat(53);
        assertThat(NflogPrefix.hashIfLong(at62)).isEqualTo(at62);
        assertThat(NflogPrefix.hashIfLong(at62 + "y")).isNotEqualTo(at62 + "y").hasSize(63);
    }

    @Test
    void theTableDecodesEveryRenderedPrefixHashedOrNot() {
        DataplaneModel m = new DataplaneModel();
        PolicyId longId = new PolicyId("platform", "ns", "n".repeat(70), ResourceKind.NETWORK_POLICY);
        CompiledRule allow = new CompiledRule(Action.Allow, null, "TCP", null, null, null, Side.ANY, Side.ANY, null);
        CompiledRule deny = new CompiledRule(Action.Deny, null, null, null, null, null, Side.ANY, Side.ANY, null);
        CompiledRule log = new CompiledRule(Action.Log, null, null, null, null, null, Side.ANY, Side.ANY, null);
        m.apply(new DataplaneUpdate.ActivePolicyUpdate(longId, new CompiledPolicy(List.of(log, allow, deny),
                List.of(deny), false)));
        m.apply(new DataplaneUpdate.ActiveProfileUpdate("kns.prod", new CompiledPolicy(List.of(allow), List.of(),
                false)));
        m.apply(new DataplaneUpdate.WorkloadEndpointUpdate("prod/wep", "cali1", null, List.of("10.0.0.1/32"),
                List.of(), List.of("kns.prod"), List.of(new TierPolicies("platform", Action.Deny, List.of(longId),
                false)), List.of()));
        HitTable t = HitTable.of(m);
        String hashed = NflogPrefix.policyRule(Verdict.ALLOW, true, 1, longId);
        assertThat(NflogPrefix.hashed(hashed)).isTrue();
        assertThat(t.decode(hashed)).isEqualTo(new RuleHit(Verdict.ALLOW, true, Owner.POLICY_RULE, longId, null,
                "platform", 1));
        assertThat(t.decode(NflogPrefix.policyRule(Verdict.DENY, false, 0, longId)).inbound()).isFalse();
        assertThat(t.decode(NflogPrefix.policyRule(Verdict.DENY, true, 0, longId))).as("Log rules do not log")
                .isNull();
        assertThat(t.decode("ARI0|pro/kns.prod").owner()).isEqualTo(Owner.PROFILE_RULE);
        assertThat(t.decode("DPE|platform")).isEqualTo(new RuleHit(Verdict.DENY, false, Owner.END_OF_TIER, null,
                null, "platform", -1));
        assertThat(t.decode("DRI").owner()).isEqualTo(Owner.NO_PROFILE);
        assertThat(t.decode("XYZ")).isNull();
    }
}
