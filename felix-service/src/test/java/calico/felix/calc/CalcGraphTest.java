package calico.felix.calc;

import static calico.felix.calc.Res.*;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.Action;
import calico.api.model.PolicyType;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.model.Rule;
import calico.api.selector.Selector;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Whole-graph cases: resources in, the applied output stream checked. */
class CalcGraphTest {

    private static final String ME = "n1";

    private static String setId(String selector) {
        return Selector.parse(selector).uniqueId();
    }

    private static ResourceKey key(ResourceKind k, String ns, String name) {
        return ResourceKey.of(k, ns, name);
    }

    @Test
    void onlyLocalEndpointsAreProgrammedButRemoteOnesAreIpSetMembers() {
        Harness h = new Harness(ME).put(tier("default", 1000.0, null),
                wep("ns1", "a", ME, "10.0.0.1", labels("app", "web")),
                wep("ns1", "b", "n2", "10.0.0.2", labels("app", "db")),
                gnp("p", "default", 1.0, "app == 'web'", List.of(allowFrom("app == 'db'")), List.of()));
        assertThat(h.state.workloads).containsOnlyKeys("ns1/a");
        assertThat(h.state.members(setId("app == 'db'"))).containsExactly("10.0.0.2/32");
        assertThat(h.tiers("ns1/a", true)).containsExactly("default:Deny:[p]");
        assertThat(h.tiers("ns1/a", false)).isEmpty();
    }

    @Test
    void tiersAndPoliciesAreOrderedByOrderThenNameWithMissingOrderLast() {
        Harness h = new Harness(ME).put(tier("t1", 100.0, null), tier("t2", 50.0, Action.Pass),
                tier("t3", null, null), tier("default", 1000.0, null),
                wep("ns1", "a", ME, "10.0.0.1", labels("app", "web")));
        h.put(gnp("x", "t1", 10.0, "all()", List.of(Rule.allow()), List.of()),
                gnp("b", "t1", 10.0, "all()", List.of(Rule.allow()), List.of()),
                gnp("c", "t1", null, "all()", List.of(Rule.allow()), List.of()),
                gnp("z", "t1", 5.0, "all()", List.of(Rule.allow()), List.of()),
                gnp("q", "t2", 1.0, "all()", List.of(Rule.allow()), List.of()),
                gnp("r", "t3", 1.0, "all()", List.of(Rule.allow()), List.of()),
                gnp("s", null, 1.0, "all()", List.of(Rule.allow()), List.of()));
        assertThat(h.tiers("ns1/a", true)).containsExactly("t2:Pass:[q]", "t1:Deny:[z, b, x, c]",
                "default:Deny:[s]", "t3:Deny:[r]");
        // Reordering a tier moves it.
        h.put(tier("t3", 1.0, null));
        assertThat(h.tiers("ns1/a", true).get(0)).isEqualTo("t3:Deny:[r]");
    }

    @Test
    void policyTypesDecideTheDirectionsAPolicyJoins() {
        Harness h = new Harness(ME).put(tier("default", null, null),
                wep("ns1", "a", ME, "10.0.0.1", labels()),
                gnp("in", "default", 1.0, "all()", List.of(), List.of()), // no rules: Ingress
                gnp("out", "default", 2.0, "all()", List.of(), List.of(Rule.allow())), // egress rules only: Egress
                gnp("both", "default", 3.0, "all()", List.of(), List.of(), PolicyType.Ingress, PolicyType.Egress));
        assertThat(h.tiers("ns1/a", true)).containsExactly("default:Deny:[in, both]");
        assertThat(h.tiers("ns1/a", false)).containsExactly("default:Deny:[out, both]");
    }

    @Test
    void passJumpsToTheNextTierAndTheDefaultActionDenies() {
        Harness h = new Harness(ME).put(tier("sec", 1.0, null), tier("default", 1000.0, null),
                profile("kns.ns1", Map.of(), List.of(Rule.allow()), List.of(Rule.allow())),
                wep("ns1", "a", ME, "10.0.0.1", labels("app", "web"), "kns.ns1"),
                wep("ns1", "b", ME, "10.0.0.2", labels("app", "db"), "kns.ns1"),
                gnp("pass-web", "sec", 1.0, "all()", List.of(action(Action.Pass).withSource(
                        calico.api.model.EntityRule.empty().withSelector("app == 'web'"))), List.of()),
                gnp("web-only", "default", 1.0, "app == 'db'", List.of(allowFrom("app == 'web'")), List.of()));
        Verdicts v = new Verdicts(h.state);
        // a -> b: passed by sec, allowed by default tier.
        assertThat(v.ingressAllowed("ns1/b", "10.0.0.1", "10.0.0.2", 80)).isTrue();
        // b -> a: sec matches nothing for b's traffic, so sec's default action (Deny) applies.
        assertThat(v.ingressAllowed("ns1/a", "10.0.0.2", "10.0.0.1", 80)).isFalse();
        // A Pass default action lets unmatched traffic on to the profiles.
        h.put(tier("sec", 1.0, Action.Pass));
        assertThat(v.ingressAllowed("ns1/a", "10.0.0.2", "10.0.0.1", 80)).isTrue();
    }

    @Test
    void stagedPoliciesAreReportedButNeverEnforced() {
        Harness h = new Harness(ME).put(tier("default", null, null), tier("audit", 1.0, null),
                profile("kns.ns1", Map.of(), List.of(Rule.allow()), List.of(Rule.allow())),
                wep("ns1", "a", ME, "10.0.0.1", labels("app", "web"), "kns.ns1"),
                staged("deny-all", "audit", 1.0, "all()", List.of(Rule.deny())));
        PolicyId id = new PolicyId("audit", null, "deny-all", ResourceKind.STAGED_GLOBAL_NETWORK_POLICY);
        assertThat(h.state.policies.get(id).staged()).isTrue();
        assertThat(h.tiers("ns1/a", true)).containsExactly("audit:Deny:[staged:deny-all]");
        assertThat(h.wep("ns1/a").ingress().get(0).enforced()).isFalse();
        assertThat(new Verdicts(h.state).ingressAllowed("ns1/a", "10.9.9.9", "10.0.0.1", 80)).isTrue();
    }

    @Test
    void stagedDeleteStandsInItsTargetsPlaceWithoutRulesAndFollowsIt() {
        Harness h = new Harness(ME).put(tier("default", null, null), tier("sec", 1.0, null),
                profile("kns.ns1", Map.of(), List.of(Rule.allow()), List.of(Rule.allow())),
                wep("ns1", "a", ME, "10.0.0.1", labels("app", "web"), "kns.ns1"),
                wep("ns1", "b", ME, "10.0.0.2", labels("app", "db"), "kns.ns1"),
                gnp("deny-web", "sec", 1.0, "app == 'web'", List.of(Rule.deny()), List.of()));
        PolicyId target = new PolicyId("sec", null, "deny-web", ResourceKind.GLOBAL_NETWORK_POLICY);
        PolicyId staged = new PolicyId("sec", null, "deny-web", ResourceKind.STAGED_GLOBAL_NETWORK_POLICY);
        PolicyId orphan = new PolicyId("sec", null, "gone", ResourceKind.STAGED_GLOBAL_NETWORK_POLICY);
        h.put(stagedDelete("deny-web", "sec"), stagedDelete("gone", "sec"));
        record Case(String what, String wep, List<String> ingressTiers) {
        }
        for (Case c : List.of(
                // Only the target's endpoint gets the staged delete, not every endpoint (all()).
                new Case("target selects a", "ns1/a", List.of("sec:Deny:[deny-web, staged:deny-web]")),
                new Case("target does not select b", "ns1/b", List.of()))) {
            assertThat(h.tiers(c.wep(), true)).as(c.what()).isEqualTo(c.ingressTiers());
            assertThat(h.tiers(c.wep(), false)).as(c.what() + " (egress: the target is ingress only)").isEmpty();
        }
        assertThat(h.state.policies.get(staged)).isEqualTo(CompiledPolicy.stagedDelete(target));
        assertThat(h.state.policies).doesNotContainKey(orphan); // a delete of nothing selects nothing
        assertThat(new Verdicts(h.state).ingressAllowed("ns1/a", "10.9.9.9", "10.0.0.1", 80)).isFalse();

        // The target moves to b: the staged delete follows it.
        h.put(gnp("deny-web", "sec", 1.0, "app == 'db'", List.of(Rule.deny()), List.of()));
        assertThat(h.tiers("ns1/a", true)).isEmpty();
        assertThat(h.tiers("ns1/b", true)).containsExactly("sec:Deny:[deny-web, staged:deny-web]");
        // The target is deleted: so is its staged delete's place; created again, it comes back.
        h.delete(new ResourceKey(ResourceKind.GLOBAL_NETWORK_POLICY, null, "deny-web"));
        assertThat(h.tiers("ns1/b", true)).isEmpty();
        assertThat(h.state.policies).doesNotContainKey(staged);
        h.put(gnp("deny-web", "sec", 1.0, "all()", List.of(Rule.deny()), List.of()));
        assertThat(h.tiers("ns1/a", true)).containsExactly("sec:Deny:[deny-web, staged:deny-web]");
        // Set again (a staged policy with rules): an ordinary staged policy, no longer a delete.
        h.put(staged("deny-web", "sec", 2.0, "app == 'db'", List.of(Rule.allow())));
        assertThat(h.tiers("ns1/a", true)).containsExactly("sec:Deny:[deny-web]");
        assertThat(h.state.policies.get(staged).deletes()).isNull();
    }

    @Test
    void namespacedPolicySelectsAndMatchesOnlyItsOwnNamespace() {
        Harness h = new Harness(ME).put(tier("default", null, null),
                wep("ns1", "a", ME, "10.0.0.1", labels("app", "web")),
                wep("ns2", "b", ME, "10.0.0.2", labels("app", "web")),
                wep("ns1", "c", "n2", "10.0.0.3", labels("app", "db")),
                wep("ns2", "d", "n2", "10.0.0.4", labels("app", "db")),
                np("ns1", "p", null, 1.0, "app == 'web'", List.of(allowFrom("app == 'db'")), List.of()));
        assertThat(h.tiers("ns1/a", true)).containsExactly("default:Deny:[p]");
        assertThat(h.tiers("ns2/b", true)).isEmpty();
        String id = setId("projectcalico.org/namespace == 'ns1' && app == 'db'");
        assertThat(h.state.members(id)).containsExactly("10.0.0.3/32");
    }

    @Test
    void namespaceSelectorMatchesNamespaceLabelsInheritedFromTheNamespaceProfile() {
        Harness h = new Harness(ME).put(tier("default", null, null),
                nsProfile("ns1", "team", "a"), nsProfile("ns2", "team", "b"),
                wep("ns1", "a", ME, "10.0.0.1", labels("app", "web"), "kns.ns1"),
                wep("ns1", "c", "n2", "10.0.0.3", labels("app", "db"), "kns.ns1"),
                wep("ns2", "d", "n2", "10.0.0.4", labels("app", "db"), "kns.ns2"),
                np("ns1", "p", null, 1.0, "all()", List.of(allowFromNs("app == 'db'", "team == 'b'")), List.of()));
        String id = setId("pcns.team == 'b' && app == 'db'");
        assertThat(h.state.members(id)).containsExactly("10.0.0.4/32");
        // Relabelling the namespace moves members, as a delta.
        h.put(nsProfile("ns1", "team", "b"));
        assertThat(h.state.members(id)).containsExactly("10.0.0.3/32", "10.0.0.4/32");
        assertThat(h.last()).containsExactly(new DataplaneUpdate.IpSetDeltaUpdate(id,
                java.util.Set.of(IpSetMember.net(calico.api.net.Cidr.parse("10.0.0.3/32"))), java.util.Set.of()));
    }

    @Test
    void globalNamespaceSelectorMeansNonNamespacedThings() {
        Harness h = new Harness(ME).put(tier("default", null, null),
                wep("ns1", "a", ME, "10.0.0.1", labels("app", "web")),
                hep("h2", "n2", "192.168.0.2", labels("app", "web")),
                gns("ext", labels("app", "web"), "8.8.8.0/24"),
                gnp("p", "default", 1.0, "all()", List.of(allowFromNs("app == 'web'", "global()")), List.of()));
        String id = setId("!has(projectcalico.org/namespace) && app == 'web'");
        assertThat(h.state.members(id)).containsExactly("192.168.0.2/32", "8.8.8.0/24");
    }

    @Test
    void globalPolicyNamespaceSelectorSelectsEndpointsByNamespaceLabels() {
        Harness h = new Harness(ME).put(tier("default", null, null),
                nsProfile("ns1", "env", "prod"), nsProfile("ns2", "env", "dev"),
                wep("ns1", "a", ME, "10.0.0.1", labels(), "kns.ns1"),
                wep("ns2", "b", ME, "10.0.0.2", labels(), "kns.ns2"),
                gnpNs("prod-only", "all()", "env == 'prod'", List.of(Rule.allow())));
        assertThat(h.tiers("ns1/a", true)).containsExactly("default:Deny:[prod-only]");
        assertThat(h.tiers("ns2/b", true)).isEmpty();
    }

    @Test
    void serviceAccountMatchesUseTheServiceAccountLabelAndItsProfileLabels() {
        Harness h = new Harness(ME).put(tier("default", null, null),
                profile("ksa.ns1.api", labels("pcsa.role", "api"), List.of(), List.of()),
                wep("ns1", "a", ME, "10.0.0.1", labels("projectcalico.org/serviceaccount", "api"), "ksa.ns1.api"),
                wep("ns1", "b", "n2", "10.0.0.2", labels("projectcalico.org/serviceaccount", "web")),
                np("ns1", "by-name", null, 1.0, "all()", List.of(allowFromSa(List.of("web"), null)), List.of()),
                np("ns1", "by-sel", null, 2.0, "all()", List.of(allowFromSa(List.of(), "role == 'api'")), List.of()));
        assertThat(h.state.members(setId("projectcalico.org/namespace == 'ns1' && projectcalico.org/serviceaccount == 'web'")))
                .containsExactly("10.0.0.2/32");
        assertThat(h.state.members(setId("projectcalico.org/namespace == 'ns1' && pcsa.role == 'api'")))
                .containsExactly("10.0.0.1/32");
    }

    @Test
    void endpointsInheritProfileLabelsAndTheirOwnLabelsWin() {
        Harness h = new Harness(ME).put(tier("default", null, null),
                profile("p1", labels("tier", "gold", "app", "from-profile"), List.of(), List.of()),
                wep("ns1", "a", ME, "10.0.0.1", labels("app", "web"), "p1"),
                wep("ns1", "b", "n2", "10.0.0.2", labels(), "p1"),
                gnp("gold", "default", 1.0, "tier == 'gold'", List.of(allowFrom("app == 'from-profile'")), List.of()));
        assertThat(h.tiers("ns1/a", true)).containsExactly("default:Deny:[gold]");
        assertThat(h.state.members(setId("app == 'from-profile'"))).containsExactly("10.0.0.2/32");
        assertThat(h.wep("ns1/a").profileIds()).containsExactly("p1");
        // Dropping the label from the profile stops the match.
        h.put(profile("p1", labels(), List.of(), List.of()));
        assertThat(h.tiers("ns1/a", true)).isEmpty();
        assertThat(h.state.policies).isEmpty();
        assertThat(h.state.ipSets).isEmpty();
    }

    @Test
    void namedPortsBecomeIpAndPortSets() {
        Harness h = new Harness(ME).put(tier("default", null, null),
                wep("ns1", "a", ME, "10.0.0.1", labels("app", "web"), List.of(port("http", 8080))),
                wep("ns1", "b", "n2", "10.0.0.2", labels("app", "web"), List.of(port("http", 9090), port("x", 1))),
                gnp("p", "default", 1.0, "all()", List.of(), List.of(allowToNamedPort("app == 'web'", "http"))));
        String id = IpSetSpec.namedPort(Selector.parse("app == 'web'"), "tcp", "http").id();
        assertThat(h.state.ipSets.get(id).type()).isEqualTo(IpSetType.IP_AND_PORT);
        assertThat(h.state.members(id)).containsExactly("10.0.0.1,tcp:8080", "10.0.0.2,tcp:9090");
        assertThat(new Verdicts(h.state).egressAllowed("ns1/a", "10.0.0.1", "10.0.0.2", 9090)).isTrue();
        assertThat(new Verdicts(h.state).egressAllowed("ns1/a", "10.0.0.1", "10.0.0.2", 8080)).isFalse();
    }

    @Test
    void networkSetsAreSelectableByLabelsAndNamespacedOnesStayInTheirNamespace() {
        Harness h = new Harness(ME).put(tier("default", null, null),
                wep("ns1", "a", ME, "10.0.0.1", labels("app", "web")),
                gns("g", labels("role", "ext"), "1.1.1.0/24", "2.2.2.2"),
                netset("ns1", "n", labels("role", "ext"), "3.3.3.0/24"),
                netset("ns2", "n", labels("role", "ext"), "4.4.4.0/24"),
                np("ns1", "p", null, 1.0, "all()", List.of(allowFrom("role == 'ext'")), List.of()),
                gnp("g", "default", 1.0, "all()", List.of(allowFrom("role == 'ext'")), List.of()));
        assertThat(h.state.members(setId("role == 'ext'")))
                .containsExactly("1.1.1.0/24", "2.2.2.2/32", "3.3.3.0/24", "4.4.4.0/24");
        assertThat(h.state.members(setId("projectcalico.org/namespace == 'ns1' && role == 'ext'")))
                .containsExactly("3.3.3.0/24");
        h.put(gns("g", labels("role", "ext"), "1.1.1.0/24"));
        assertThat(h.state.members(setId("role == 'ext'"))).containsExactly("1.1.1.0/24", "3.3.3.0/24", "4.4.4.0/24");
    }

    @Test
    void labelChangesAreSentAsDeltas() {
        Harness h = new Harness(ME).put(tier("default", null, null),
                wep("ns1", "a", ME, "10.0.0.1", labels("app", "web")),
                wep("ns1", "b", "n2", "10.0.0.2", labels("app", "db")),
                gnp("p", "default", 1.0, "app == 'web'", List.of(allowFrom("app == 'db'")), List.of()));
        String id = setId("app == 'db'");
        h.put(wep("ns1", "b", "n2", "10.0.0.2", labels("app", "cache")));
        assertThat(h.last()).containsExactly(new DataplaneUpdate.IpSetDeltaUpdate(id, java.util.Set.of(),
                java.util.Set.of(IpSetMember.net(calico.api.net.Cidr.parse("10.0.0.2/32")))));
        // A no-op update emits nothing.
        int before = h.batches.size();
        h.put(wep("ns1", "b", "n2", "10.0.0.2", labels("app", "cache")));
        assertThat(h.batches).hasSize(before);
    }

    @Test
    void anEndpointMovingBetweenNodesIsAddedAndRemovedLocally() {
        Harness h = new Harness(ME).put(tier("default", null, null),
                wep("ns1", "a", "n2", "10.0.0.1", labels("app", "web")),
                gnp("p", "default", 1.0, "app == 'web'", List.of(allowFrom("app == 'web'")), List.of()));
        assertThat(h.state.workloads).isEmpty();
        assertThat(h.state.policies).isEmpty();
        h.put(wep("ns1", "a", ME, "10.0.0.1", labels("app", "web")));
        assertThat(h.state.workloads).containsOnlyKeys("ns1/a");
        assertThat(h.state.members(setId("app == 'web'"))).containsExactly("10.0.0.1/32");
        h.put(wep("ns1", "a", "n3", "10.0.0.1", labels("app", "web")));
        assertThat(h.state.workloads).isEmpty();
        assertThat(h.state.policies).isEmpty();
        assertThat(h.state.ipSets).isEmpty();
    }

    @Test
    void aMissingTierFailsClosedUntilItExists() {
        Harness h = new Harness(ME).put(
                profile("kns.ns1", Map.of(), List.of(Rule.allow()), List.of(Rule.allow())),
                wep("ns1", "a", ME, "10.0.0.1", labels(), "kns.ns1"),
                gnp("p", "nosuch", 1.0, "all()", List.of(Rule.allow()), List.of()));
        assertThat(h.tiers("ns1/a", true)).containsExactly("nosuch:Deny:[]");
        assertThat(h.wep("ns1/a").ingress().get(0).missing()).isTrue();
        assertThat(new Verdicts(h.state).ingressAllowed("ns1/a", "10.1.1.1", "10.0.0.1", 80)).isFalse();
        h.put(tier("nosuch", 5.0, null));
        assertThat(h.tiers("ns1/a", true)).containsExactly("nosuch:Deny:[p]");
        assertThat(new Verdicts(h.state).ingressAllowed("ns1/a", "10.1.1.1", "10.0.0.1", 80)).isTrue();
    }

    @Test
    void aMissingProfileContributesNothingUntilItExists() {
        Harness h = new Harness(ME).put(wep("ns1", "a", ME, "10.0.0.1", labels(), "kns.ns1"));
        assertThat(h.wep("ns1/a").profileIds()).isEmpty();
        assertThat(new Verdicts(h.state).ingressAllowed("ns1/a", "10.1.1.1", "10.0.0.1", 80)).isFalse();
        h.put(profile("kns.ns1", Map.of(), List.of(Rule.allow()), List.of()));
        assertThat(h.wep("ns1/a").profileIds()).containsExactly("kns.ns1");
        assertThat(h.state.profiles).containsOnlyKeys("kns.ns1");
        h.delete(key(ResourceKind.PROFILE, null, "kns.ns1"));
        assertThat(h.wep("ns1/a").profileIds()).isEmpty();
        assertThat(h.state.profiles).isEmpty();
    }

    @Test
    void duplicateAddressesStayUntilTheLastHolderGoes() {
        Harness h = new Harness(ME).put(tier("default", null, null),
                wep("ns1", "a", ME, "10.0.0.1", labels("app", "web")),
                wep("ns1", "b", "n2", "10.0.0.9", labels("app", "db")),
                wep("ns1", "c", "n3", "10.0.0.9", labels("app", "db")),
                gnp("p", "default", 1.0, "app == 'web'", List.of(allowFrom("app == 'db'")), List.of()));
        String id = setId("app == 'db'");
        assertThat(h.state.members(id)).containsExactly("10.0.0.9/32");
        h.delete(key(ResourceKind.WORKLOAD_ENDPOINT, "ns1", "b"));
        assertThat(h.state.members(id)).containsExactly("10.0.0.9/32");
        h.delete(key(ResourceKind.WORKLOAD_ENDPOINT, "ns1", "c"));
        assertThat(h.state.members(id)).isEmpty();
    }

    @Test
    void deletingAPolicyRemovesItBeforeItsIpSetsAndInSyncComesLast() {
        Harness h = new Harness(ME).put(tier("default", null, null),
                wep("ns1", "a", ME, "10.0.0.1", labels("app", "web")),
                gnp("p", "default", 1.0, "app == 'web'", List.of(allowFrom("app == 'db'")), List.of()));
        h.inSync();
        assertThat(h.lastPolicyUpdates()).containsExactly(new DataplaneUpdate.InSync());
        assertThat(h.last().get(h.last().size() - 1)).isEqualTo(new DataplaneUpdate.InSync());
        h.delete(key(ResourceKind.GLOBAL_NETWORK_POLICY, null, "p"));
        assertThat(h.lastPolicyUpdates()).extracting(u -> u.getClass().getSimpleName())
                .containsExactly("WorkloadEndpointUpdate", "ActivePolicyRemove", "IpSetRemove");
        assertThat(h.state.ipSets).isEmpty();
    }

    @Test
    void changingARuleSelectorSwapsIpSetsInASafeOrder() {
        Harness h = new Harness(ME).put(tier("default", null, null),
                wep("ns1", "a", ME, "10.0.0.1", labels("app", "web")),
                gnp("p", "default", 1.0, "app == 'web'", List.of(allowFrom("app == 'db'")), List.of()));
        h.put(gnp("p", "default", 1.0, "app == 'web'", List.of(allowFrom("app == 'cache'")), List.of()));
        assertThat(h.last()).extracting(u -> u.getClass().getSimpleName())
                .containsExactly("IpSetUpdate", "ActivePolicyUpdate", "IpSetRemove");
        assertThat(h.state.ipSets).containsOnlyKeys(setId("app == 'cache'"));
    }

    @Test
    void hostEndpointsOnThisNodeAreProgrammed() {
        Harness h = new Harness(ME).put(tier("default", null, null),
                hep("h1", ME, "192.168.0.1", labels("role", "node")),
                hep("h2", "n2", "192.168.0.2", labels("role", "node")),
                gnp("p", "default", 1.0, "role == 'node'", List.of(allowFrom("role == 'node'")), List.of()));
        assertThat(h.state.hostEndpoints).containsOnlyKeys("h1");
        assertThat(h.state.hostEndpoints.get("h1").ingress()).hasSize(1);
        assertThat(h.state.members(setId("role == 'node'"))).containsExactly("192.168.0.1/32", "192.168.0.2/32");
    }

    @Test
    void infrastructureUpdatesPassThroughCoalescedByKey() {
        Harness h = new Harness(ME);
        h.graph.infraListener().onInfraUpdate(new DataplaneUpdate.RouteUpdate("10.0.0.0/26",
                DataplaneUpdate.RouteType.REMOTE_WORKLOAD, "n2", "192.168.0.2", null, null, false));
        h.graph.infraListener().onInfraUpdate(new DataplaneUpdate.RouteRemove("10.0.0.0/26"));
        h.graph.infraListener().onInfraUpdate(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(Map.of("a", "b"))));
        h.graph.flush();
        assertThat(h.last()).containsExactly(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(Map.of("a", "b"))));
    }

    @Test
    void aNotSelectorInANamespacedPolicyKeepsTheSourceInTheNamespace() {
        Harness h = new Harness(ME).put(tier("default", null, null),
                wep("ns1", "a", ME, "10.0.0.1", labels("app", "web")),
                wep("ns1", "b", "n2", "10.0.0.2", labels("app", "db")),
                wep("ns2", "c", "n2", "10.0.0.3", labels("app", "web")),
                np("ns1", "p", null, 1.0, "all()", List.of(Rule.allow().withSource(
                        new calico.api.model.EntityRule(null, null, null, null, null, "app == 'web'", null, null, null))),
                        List.of()));
        CompiledRule r = h.state.policies.values().iterator().next().inbound().get(0);
        assertThat(r.source().ipSetIds()).containsExactly(setId("projectcalico.org/namespace == 'ns1'"));
        assertThat(r.source().notIpSetIds()).containsExactly(setId("app == 'web'"));
        Verdicts v = new Verdicts(h.state);
        assertThat(v.ingressAllowed("ns1/a", "10.0.0.2", "10.0.0.1", 80)).isTrue();
        assertThat(v.ingressAllowed("ns1/a", "10.0.0.3", "10.0.0.1", 80)).as("other namespace").isFalse();
        assertThat(v.ingressAllowed("ns1/a", "10.0.0.1", "10.0.0.1", 80)).as("not-selected").isFalse();
    }

    @Test
    void anInexpressibleMatchDropsAnAllowRuleAndWidensADenyRule() {
        // Destination services with ports of the rule's own (validation refuses them): the service's
        // (address, port) set cannot be ANDed with the ports, so an Allow goes and a Deny matches either.
        calico.api.model.EntityRule svc = new calico.api.model.EntityRule(null, null, null,
                List.of(calico.api.model.Port.of(8080)), null, null, null, null,
                new calico.api.model.EntityRule.ServiceMatch("svc", "ns1"));
        Harness h = new Harness(ME).put(tier("default", null, null),
                wep("ns1", "a", ME, "10.0.0.1", labels()),
                gnp("p", "default", 1.0, "all()", List.of(), List.of(Rule.allow().withProtocol(
                        calico.api.model.Protocol.TCP).withDestination(svc), Rule.deny().withProtocol(
                        calico.api.model.Protocol.TCP).withDestination(svc))));
        List<CompiledRule> out = h.state.policies.values().iterator().next().outbound();
        assertThat(out).singleElement().satisfies(r -> {
            assertThat(r.action()).isEqualTo(Action.Deny);
            assertThat(r.destination().ports()).containsExactly("8080");
            assertThat(r.destination().namedPortIpSetIds()).containsExactly(IpSetSpec.service("ns1", "svc", true).id());
        });
    }

    @Test
    void stagedKubernetesPoliciesAreConvertedAndReportedAsStaged() {
        calico.api.k8s.KubeObjectMeta m = calico.api.k8s.KubeObjectMeta.of("ns1", "k", Map.of());
        calico.api.model.StagedKubernetesNetworkPolicy skp = new calico.api.model.StagedKubernetesNetworkPolicy(
                calico.api.model.ObjectMeta.namespaced("ns1", "k"),
                new calico.api.model.StagedKubernetesNetworkPolicySpec(calico.api.model.StagedAction.Set,
                        calico.api.k8s.policy.LabelSelector.everything(), List.of(), List.of(), List.of(PolicyType.Ingress)));
        Harness h = new Harness(ME).put(tier("default", null, null),
                wep("ns1", "a", ME, "10.0.0.1", labels()), skp);
        assertThat(h.wep("ns1/a").ingress()).singleElement().satisfies(t -> {
            assertThat(t.enforced()).isFalse();
            assertThat(t.policies()).singleElement().satisfies(p -> {
                assertThat(p.staged()).isTrue();
                assertThat(p.kind()).isEqualTo(ResourceKind.STAGED_KUBERNETES_NETWORK_POLICY);
            });
        });
        assertThat(m.name()).isEqualTo("k");
    }

    @Test
    void movingAPolicyToAnotherTierReplacesItsId() {
        Harness h = new Harness(ME).put(tier("default", null, null), tier("t1", 1.0, null),
                wep("ns1", "a", ME, "10.0.0.1", labels()),
                gnp("p", "default", 1.0, "all()", List.of(Rule.allow()), List.of()));
        h.put(gnp("p", "t1", 1.0, "all()", List.of(Rule.allow()), List.of()));
        assertThat(h.state.policies.keySet()).extracting(PolicyId::tier).containsExactly("t1");
        assertThat(h.tiers("ns1/a", true)).containsExactly("t1:Deny:[p]");
        h.inSync().inSync();
        assertThat(h.state.inSync).isTrue();
    }

    @Test
    void aSetDroppedAndRestoredWithinOneBatchIsRewrittenWhole() {
        Harness h = new Harness(ME).put(tier("default", null, null),
                wep("ns1", "a", ME, "10.0.0.1", labels("app", "web")),
                wep("ns1", "b", "n2", "10.0.0.2", labels("app", "db")),
                gnp("p", "default", 1.0, "app == 'web'", List.of(allowFrom("app == 'db'")), List.of()));
        h.graph.onUpdates(List.of(
                calico.libcalico.syncer.Update.of(calico.libcalico.syncer.UpdateType.UPDATED,
                        gnp("p", "default", 1.0, "app == 'web'", List.of(allowFrom("app == 'cache'")), List.of()), 10),
                calico.libcalico.syncer.Update.of(calico.libcalico.syncer.UpdateType.UPDATED,
                        wep("ns1", "b", "n2", "10.0.0.3", labels("app", "db")), 11),
                calico.libcalico.syncer.Update.of(calico.libcalico.syncer.UpdateType.UPDATED,
                        gnp("p", "default", 1.0, "app == 'web'", List.of(allowFrom("app == 'db'")), List.of()), 12)));
        assertThat(h.lastPolicyUpdates()).containsExactly(new DataplaneUpdate.IpSetUpdate(setId("app == 'db'"), IpSetType.NET,
                java.util.Set.of(IpSetMember.net(calico.api.net.Cidr.parse("10.0.0.3/32")))));
        assertThat(h.state.members(setId("app == 'db'"))).containsExactly("10.0.0.3/32");
    }
}
