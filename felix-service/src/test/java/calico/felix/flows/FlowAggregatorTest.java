package calico.felix.flows;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.Action;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import calico.dataplane.netfilter.ConntrackCounters;
import calico.dataplane.netfilter.ConntrackEntry;
import calico.dataplane.netfilter.FlowTuple;
import calico.dataplane.netfilter.NflogPacket;
import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.CompiledRule;
import calico.felix.calc.CompiledRule.Side;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.IpSetMember;
import calico.felix.calc.IpSetType;
import calico.felix.calc.PolicyId;
import calico.felix.calc.TierPolicies;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.GenericChain.Rules;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.Names;
import calico.felix.dataplane.rules.RuleRenderer;
import calico.felix.dataplane.rules.Ruleset;
import calico.felix.dataplane.rules.Target;
import calico.libcalico.goldmane.proto.EndpointType;
import calico.libcalico.goldmane.proto.Flow;
import calico.libcalico.goldmane.proto.PolicyHit;
import calico.libcalico.goldmane.proto.PolicyKind;
import calico.libcalico.goldmane.proto.Reporter;
import calico.felix.calc.FelixSettings;
import java.net.InetAddress;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The aggregation fed with the records the kernel readers produce, carrying the prefixes the
 * renderer really emitted for the model: actions, traces (enforced and pending), counters,
 * reporters, connection accounting across intervals.
 */
class FlowAggregatorTest {

    static final PolicyId ALLOW_80 = new PolicyId("default", "prod", "api-in", ResourceKind.NETWORK_POLICY);
    static final PolicyId STAGED = new PolicyId("default", "prod", "api-lockdown", ResourceKind.STAGED_NETWORK_POLICY);
    static final String CLIENT_SET = "s:client";

    static InetAddress ip(String s) {
        try {
            return InetAddress.getByName(s);
        } catch (java.net.UnknownHostException e) {
            throw new IllegalArgumentException(s, e);
        }
    }

    static CompiledRule tcp(Action a, String port, String srcSet) {
        Side src = srcSet == null ? Side.ANY : new Side(List.of(), List.of(), List.of(), List.of(), List.of(srcSet),
                List.of(), List.of(), List.of());
        Side dst = new Side(List.of(), List.of(), port == null ? List.of() : List.of(port), List.of(), List.of(),
                List.of(), List.of(), List.of());
        return new CompiledRule(a, null, "TCP", null, null, null, src, dst, null);
    }

    /** prod/api (10.70.0.2) allows TCP 8080 from the client set and denies 9000; a staged policy denies 8080. */
    static DataplaneModel model() {
        DataplaneModel m = new DataplaneModel();
        m.apply(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(Map.of("flowLogsGoldmaneServer", "127.0.0.1:1"))));
        m.apply(new DataplaneUpdate.IpSetUpdate(CLIENT_SET, IpSetType.NET,
                Set.of(IpSetMember.net(Cidr.parse("10.70.1.1/32")))));
        m.apply(new DataplaneUpdate.ActivePolicyUpdate(ALLOW_80, new CompiledPolicy(
                List.of(tcp(Action.Allow, "8080", CLIENT_SET), tcp(Action.Deny, "9000", null)), List.of(), false)));
        m.apply(new DataplaneUpdate.ActivePolicyUpdate(STAGED, new CompiledPolicy(
                List.of(tcp(Action.Deny, "8080", null)), List.of(), true)));
        m.apply(new DataplaneUpdate.ActiveProfileUpdate("kns.dev", new CompiledPolicy(List.of(),
                List.of(new CompiledRule(Action.Allow, null, null, null, null, null, Side.ANY, Side.ANY, null)),
                false)));
        // Its profile has no rules (the model skips an endpoint naming a profile it lacks).
        m.apply(new DataplaneUpdate.ActiveProfileUpdate("kns.prod", new CompiledPolicy(List.of(), List.of(), false)));
        m.apply(new DataplaneUpdate.WorkloadEndpointUpdate("prod/e2e--node-k8s-api-eth0", "caliapi", null,
                List.of("10.70.0.2/32"), List.of(), List.of("kns.prod"),
                List.of(new TierPolicies("default", Action.Deny, List.of(STAGED, ALLOW_80), false)), List.of(),
                new DataplaneUpdate.EndpointIdentity(Map.of("app", "api", "projectcalico.org/namespace", "prod"), "")));
        m.apply(new DataplaneUpdate.WorkloadEndpointUpdate("dev/e2e--node-k8s-client-eth0", "caliclient", null,
                List.of("10.70.1.1/32"), List.of(), List.of("kns.dev"), List.of(), List.of()));
        return m;
    }

    /** The prefix of the {@code n}th NFLOG rule in a rendered chain (what the kernel would report). */
    static String renderedPrefix(Ruleset rs, String chain, int n) {
        return ((Rules) rs.chains(Ruleset.Table.FILTER).get(chain)).rules().stream()
                .filter(r -> r.target() instanceof Target.Nflog).map(r -> ((Target.Nflog) r.target()).prefix())
                .toList().get(n);
    }

    final DataplaneModel model = model();
    final FlowContext ctx = FlowContext.of(model);
    final Ruleset rendered = RuleRenderer.render(model, Set.of(IpFamily.V4));
    final FlowAggregator agg = new FlowAggregator(() -> ctx);
    final FlowTuple to8080 = new FlowTuple(ip("10.70.1.1"), ip("10.70.0.2"), 6, 40001, 8080);
    final FlowTuple to9000 = new FlowTuple(ip("10.70.1.1"), ip("10.70.0.2"), 6, 40002, 9000);

    /** A packet logged at the epoch: due in any interval these tests flush. */
    static NflogPacket nflog(int group, String prefix, FlowTuple t) {
        return nflog(group, prefix, t, Instant.EPOCH);
    }

    static NflogPacket nflog(int group, String prefix, FlowTuple t, Instant at) {
        return new NflogPacket(group, prefix, t, 60, 3, 4, at);
    }

    /**
     * A flush that runs late (load) closes the interval it was scheduled for: a connection whose first
     * packet was logged after that interval's end is reported by the next flush, in the next bucket.
     */
    @Test
    void aConnectionSeenAfterTheIntervalEndsStartsInTheNextOne() {
        String egressAllow = renderedPrefix(rendered, Names.profileOutbound("kns.dev"), 0);
        String ingressAllow = renderedPrefix(rendered, Names.policyInbound(ALLOW_80), 0);
        Instant late = Instant.ofEpochMilli(1_015_300); // 0.3 s after the interval [1000, 1015) ended
        agg.onNflog(nflog(2, egressAllow, to8080, Instant.ofEpochMilli(1_014_000)));
        agg.onNflog(nflog(1, ingressAllow, to8080, Instant.ofEpochMilli(1_014_000)));
        agg.onNflog(nflog(2, egressAllow, to9000, late));
        agg.onNflog(nflog(1, renderedPrefix(rendered, Names.policyInbound(ALLOW_80), 1), to9000, late));
        List<Flow> first = agg.flush(1000, 1015);
        assertThat(first).extracting(f -> f.getKey().getDestPort()).containsOnly(8080L);
        List<Flow> next = agg.flush(1015, 1030);
        assertThat(next).filteredOn(f -> f.getKey().getDestPort() == 9000).hasSize(2)
                .allMatch(f -> f.getNumConnectionsStarted() == 1);
    }

    static ConntrackEntry ct(FlowTuple t, long op, long ob, long rp, long rb, boolean destroyed) {
        return new ConntrackEntry(t, t.reversed(), new ConntrackCounters(op, ob), new ConntrackCounters(rp, rb), 0,
                7, 0xe, destroyed);
    }

    Flow only(List<Flow> flows, Reporter r, int port) {
        List<Flow> l = flows.stream().filter(f -> f.getKey().getReporter() == r && f.getKey().getDestPort() == port)
                .toList();
        assertThat(l).hasSize(1);
        return l.get(0);
    }

    @Test
    void anAllowedConnectionHasItsRuleHitTheStagedDenyPendingAndConntrackCounters() {
        String egressAllow = renderedPrefix(rendered, Names.profileOutbound("kns.dev"), 0);
        String ingressAllow = renderedPrefix(rendered, Names.policyInbound(ALLOW_80), 0);
        assertThat(ingressAllow).isEqualTo("API0|np/prod/api-in");
        agg.onNflog(nflog(2, egressAllow, to8080));
        agg.onNflog(nflog(1, ingressAllow, to8080));
        agg.onConntrack(ct(to8080, 6, 400, 4, 2000, false));
        List<Flow> flows = agg.flush(1000, 1015);
        assertThat(flows).hasSize(2);

        Flow dst = only(flows, Reporter.Dst, 8080);
        assertThat(dst.getKey().getSourceName()).isEqualTo("client");
        assertThat(dst.getKey().getSourceNamespace()).isEqualTo("dev");
        assertThat(dst.getKey().getDestName()).isEqualTo("api");
        assertThat(dst.getKey().getDestType()).isEqualTo(EndpointType.WorkloadEndpoint);
        assertThat(dst.getKey().getProto()).isEqualTo("tcp");
        assertThat(dst.getKey().getAction()).isEqualTo(calico.libcalico.goldmane.proto.Action.Allow);
        PolicyHit hit = dst.getKey().getPolicies().getEnforcedPolicies(0);
        assertThat(hit.getKind()).isEqualTo(PolicyKind.CalicoNetworkPolicy);
        assertThat(hit.getName()).isEqualTo("api-in");
        assertThat(hit.getNamespace()).isEqualTo("prod");
        assertThat(hit.getTier()).isEqualTo("default");
        assertThat(hit.getRuleIndex()).isZero();
        assertThat(hit.getPolicyIndex()).isZero();
        PolicyHit pending = dst.getKey().getPolicies().getPendingPolicies(0);
        assertThat(pending.getKind()).isEqualTo(PolicyKind.StagedNetworkPolicy);
        assertThat(pending.getName()).isEqualTo("api-lockdown");
        assertThat(pending.getAction()).isEqualTo(calico.libcalico.goldmane.proto.Action.Deny);
        assertThat(dst.getKey().getPolicies().getPendingPoliciesCount()).isEqualTo(1);
        // Towards the reporting (destination) endpoint is "in".
        assertThat(dst.getPacketsIn()).isEqualTo(6);
        assertThat(dst.getBytesIn()).isEqualTo(400);
        assertThat(dst.getPacketsOut()).isEqualTo(4);
        assertThat(dst.getBytesOut()).isEqualTo(2000);
        assertThat(dst.getNumConnectionsStarted()).isEqualTo(1);
        assertThat(dst.getNumConnectionsLive()).isEqualTo(1);
        assertThat(dst.getSourceIpsList()).containsExactly("10.70.1.1");
        assertThat(dst.getDestIpsList()).containsExactly("10.70.0.2");
        assertThat(dst.getStartTime()).isEqualTo(1000);
        assertThat(dst.getEndTime()).isEqualTo(1015);

        Flow src = only(flows, Reporter.Src, 8080);
        assertThat(src.getKey().getPolicies().getEnforcedPolicies(0).getKind()).isEqualTo(PolicyKind.Profile);
        assertThat(src.getPacketsOut()).isEqualTo(6);
        assertThat(src.getBytesIn()).isEqualTo(2000);

        // Next interval: only the deltas; then the connection ends and is reported completed once.
        agg.onConntrack(ct(to8080, 10, 700, 8, 4000, false));
        Flow dst2 = only(agg.flush(1015, 1030), Reporter.Dst, 8080);
        assertThat(dst2.getPacketsIn()).isEqualTo(4);
        assertThat(dst2.getBytesOut()).isEqualTo(2000);
        assertThat(dst2.getNumConnectionsStarted()).isZero();
        assertThat(dst2.getNumConnectionsLive()).isEqualTo(1);
        agg.onConntrack(ct(to8080, 11, 760, 9, 4060, true));
        Flow dst3 = only(agg.flush(1030, 1045), Reporter.Dst, 8080);
        assertThat(dst3.getNumConnectionsCompleted()).isEqualTo(1);
        assertThat(dst3.getNumConnectionsLive()).isZero();
        assertThat(dst3.getPacketsIn()).isEqualTo(1);
        assertThat(agg.flush(1045, 1060)).isEmpty();
        assertThat(agg.connections()).isZero();
    }

    @Test
    void withPolicyEvaluationModeNoneFlowsCarryNoPendingTrace() {
        DataplaneModel m = model();
        m.apply(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(Map.of("flowLogsGoldmaneServer", "127.0.0.1:1",
                "flowLogsPolicyEvaluationMode", "None"))));
        FlowAggregator a = new FlowAggregator(() -> FlowContext.of(m));
        a.onNflog(nflog(1, renderedPrefix(rendered, Names.policyInbound(ALLOW_80), 0), to8080));
        a.onConntrack(ct(to8080, 6, 400, 4, 2000, false));
        Flow dst = only(a.flush(1000, 1015), Reporter.Dst, 8080);
        assertThat(dst.getKey().getPolicies().getEnforcedPoliciesCount()).isEqualTo(1);
        assertThat(dst.getKey().getPolicies().getPendingPoliciesCount()).isZero(); // Continuous: the staged deny
    }

    @Test
    void aDeniedConnectionCountsItsLoggedRetransmitsAndNamesTheDenyRule() {
        String deny = renderedPrefix(rendered, Names.policyInbound(ALLOW_80), 1);
        assertThat(deny).isEqualTo("DPI1|np/prod/api-in");
        for (int i = 0; i < 3; i++) {
            agg.onNflog(nflog(1, deny, to9000)); // SYN and two retransmits
        }
        Flow f = only(agg.flush(1000, 1015), Reporter.Dst, 9000);
        assertThat(f.getKey().getAction()).isEqualTo(calico.libcalico.goldmane.proto.Action.Deny);
        assertThat(f.getKey().getPolicies().getEnforcedPolicies(0).getRuleIndex()).isEqualTo(1);
        assertThat(f.getPacketsIn()).isEqualTo(3);
        assertThat(f.getBytesIn()).isEqualTo(180);
        assertThat(f.getNumConnectionsStarted()).isEqualTo(1);
        assertThat(f.getNumConnectionsLive()).isZero();
        // The staged policy does not match 9000: the pending trace ends like the enforced one.
        PolicyHit p = f.getKey().getPolicies().getPendingPolicies(0);
        assertThat(p.getName()).isEqualTo("api-in");
        assertThat(p.getRuleIndex()).isEqualTo(1);
        agg.onNflog(nflog(1, deny, to9000)); // a late retransmit: a packet, not a new connection
        Flow late = only(agg.flush(1015, 1030), Reporter.Dst, 9000);
        assertThat(late.getNumConnectionsStarted()).isZero();
        assertThat(late.getPacketsIn()).isEqualTo(1);
        assertThat(agg.flush(1030, 1045)).isEmpty();
    }

    static final PolicyId ANP = new PolicyId("kube-admin", null, "kanp.adminnetworkpolicy.pass-dev",
            ResourceKind.GLOBAL_NETWORK_POLICY);
    static final PolicyId BANP = new PolicyId("kube-baseline", null, "kbanp.baselineadminnetworkpolicy.default",
            ResourceKind.GLOBAL_NETWORK_POLICY);

    @Test
    void adminAndBaselinePoliciesAreNamedWithTheirKindAndTierInBothTraces() {
        DataplaneModel m = model();
        // api's ingress: the ANP passes the client's 8080 (api-in then allows it) and denies 7000; the
        // baseline denies 6000.
        m.apply(new DataplaneUpdate.ActivePolicyUpdate(ANP, new CompiledPolicy(
                List.of(tcp(Action.Pass, "8080", CLIENT_SET), tcp(Action.Deny, "7000", null),
                        tcp(Action.Pass, "6000", null)), List.of(), false)));
        m.apply(new DataplaneUpdate.ActivePolicyUpdate(BANP, new CompiledPolicy(
                List.of(tcp(Action.Deny, "6000", null)), List.of(), false)));
        m.apply(new DataplaneUpdate.WorkloadEndpointUpdate("prod/e2e--node-k8s-api-eth0", "caliapi", null,
                List.of("10.70.0.2/32"), List.of(), List.of("kns.prod"),
                List.of(new TierPolicies("kube-admin", Action.Pass, List.of(ANP), false),
                        new TierPolicies("default", Action.Deny, List.of(STAGED, ALLOW_80), false),
                        new TierPolicies("kube-baseline", Action.Pass, List.of(BANP), false)), List.of(),
                new DataplaneUpdate.EndpointIdentity(Map.of("app", "api", "projectcalico.org/namespace", "prod"), "")));
        Ruleset rs = RuleRenderer.render(m, Set.of(IpFamily.V4));
        FlowAggregator a = new FlowAggregator(() -> FlowContext.of(m));
        agg8080(a, rs);
        Flow passed = only(a.flush(0, 15), Reporter.Dst, 8080);
        PolicyHit first = passed.getKey().getPolicies().getEnforcedPolicies(0);
        assertThat(first.getKind()).isEqualTo(PolicyKind.ClusterNetworkPolicyAdminTier);
        assertThat(first.getName()).isEqualTo("pass-dev");
        assertThat(first.getTier()).isEqualTo("kube-admin");
        assertThat(first.getNamespace()).isEmpty();
        assertThat(first.getAction()).isEqualTo(calico.libcalico.goldmane.proto.Action.Pass);
        assertThat(passed.getKey().getPolicies().getEnforcedPolicies(1).getName()).isEqualTo("api-in");
        PolicyHit pendingFirst = passed.getKey().getPolicies().getPendingPolicies(0);
        assertThat(pendingFirst.getKind()).isEqualTo(PolicyKind.ClusterNetworkPolicyAdminTier);
        assertThat(pendingFirst.getName()).isEqualTo("pass-dev");
        assertThat(pendingFirst.getAction()).isEqualTo(calico.libcalico.goldmane.proto.Action.Pass);

        // The baseline's deny as the kernel reports it (its rule's NFLOG prefix).
        FlowTuple to6000 = new FlowTuple(ip("10.70.1.1"), ip("10.70.0.2"), 6, 40003, 6000);
        a.onNflog(nflog(1, renderedPrefix(rs, Names.policyInbound(BANP), 0), to6000));
        Flow baseline = only(a.flush(15, 30), Reporter.Dst, 6000);
        PolicyHit b = baseline.getKey().getPolicies().getEnforcedPolicies(0);
        assertThat(b.getKind()).isEqualTo(PolicyKind.ClusterNetworkPolicyBaselineTier);
        assertThat(b.getName()).isEqualTo("default");
        assertThat(b.getTier()).isEqualTo("kube-baseline");
        assertThat(b.getAction()).isEqualTo(calico.libcalico.goldmane.proto.Action.Deny);
    }

    @Test
    void aStagedDeleteMakesThePendingTraceWhatTheClusterWouldDoWithoutItsTarget() {
        DataplaneModel m = model();
        PolicyId delete = new PolicyId("default", "prod", "api-in", ResourceKind.STAGED_NETWORK_POLICY);
        m.apply(new DataplaneUpdate.ActivePolicyUpdate(delete, new CompiledPolicy(List.of(), List.of(), true,
                ALLOW_80)));
        // Without api-in, no policy selects api: its namespace profile (Kubernetes' default) allows.
        m.apply(new DataplaneUpdate.ActiveProfileUpdate("kns.prod", new CompiledPolicy(
                List.of(new CompiledRule(Action.Allow, null, null, null, null, null, Side.ANY, Side.ANY, null)),
                List.of(), false)));
        m.apply(new DataplaneUpdate.WorkloadEndpointUpdate("prod/e2e--node-k8s-api-eth0", "caliapi", null,
                List.of("10.70.0.2/32"), List.of(), List.of("kns.prod"),
                List.of(new TierPolicies("default", Action.Deny, List.of(ALLOW_80, delete), false)), List.of(),
                new DataplaneUpdate.EndpointIdentity(Map.of("app", "api", "projectcalico.org/namespace", "prod"), "")));
        Ruleset rs = RuleRenderer.render(m, Set.of(IpFamily.V4));
        FlowAggregator a = new FlowAggregator(() -> FlowContext.of(m));
        a.onNflog(nflog(1, renderedPrefix(rs, Names.policyInbound(ALLOW_80), 1), to9000));
        Flow denied = only(a.flush(0, 15), Reporter.Dst, 9000);
        PolicyHit enforced = denied.getKey().getPolicies().getEnforcedPolicies(0);
        assertThat(enforced.getName()).isEqualTo("api-in");
        assertThat(enforced.getAction()).isEqualTo(calico.libcalico.goldmane.proto.Action.Deny);
        // Pending: api-in is gone, and so is the delete itself; the tier selects nothing, the profile allows.
        assertThat(denied.getKey().getPolicies().getPendingPoliciesList()).singleElement().satisfies(p -> {
            assertThat(p.getKind()).isEqualTo(PolicyKind.Profile);
            assertThat(p.getAction()).isEqualTo(calico.libcalico.goldmane.proto.Action.Allow);
        });

        // A tier that keeps another policy still ends the pending trace with that policy (the
        // staged Set api-lockdown denies 8080), not with the deleted one.
        m.apply(new DataplaneUpdate.WorkloadEndpointUpdate("prod/e2e--node-k8s-api-eth0", "caliapi", null,
                List.of("10.70.0.2/32"), List.of(), List.of("kns.prod"),
                List.of(new TierPolicies("default", Action.Deny, List.of(STAGED, ALLOW_80, delete), false)),
                List.of(), new DataplaneUpdate.EndpointIdentity(Map.of("app", "api",
                        "projectcalico.org/namespace", "prod"), "")));
        Ruleset rs2 = RuleRenderer.render(m, Set.of(IpFamily.V4));
        a.onNflog(nflog(1, renderedPrefix(rs2, Names.policyInbound(ALLOW_80), 1), to9000));
        Flow again = only(a.flush(15, 30), Reporter.Dst, 9000);
        // 9000: api-lockdown matches only 8080; the tier's end (Deny) decides, triggered by api-lockdown.
        PolicyHit endOfTier = again.getKey().getPolicies().getPendingPolicies(0);
        assertThat(endOfTier.getKind()).isEqualTo(PolicyKind.EndOfTier);
        assertThat(endOfTier.getAction()).isEqualTo(calico.libcalico.goldmane.proto.Action.Deny);
        assertThat(endOfTier.getTrigger().getName()).isEqualTo("api-lockdown");
        assertThat(again.getKey().getPolicies().getPendingPoliciesList())
                .noneMatch(p -> p.getName().equals("api-in") || p.getTrigger().getName().equals("api-in"));
    }

    private void agg8080(FlowAggregator a, Ruleset rs) {
        a.onNflog(nflog(2, renderedPrefix(rs, Names.profileOutbound("kns.dev"), 0), to8080));
        a.onNflog(nflog(1, renderedPrefix(rs, Names.policyInbound(ANP), 0), to8080));
        a.onNflog(nflog(1, renderedPrefix(rs, Names.policyInbound(ALLOW_80), 0), to8080));
        a.onConntrack(ct(to8080, 6, 400, 4, 2000, false));
    }

    @Test
    void endOfTierDropsNameTheTierAndTheirTriggerAndUnknownPrefixesAreCounted() {
        FlowTuple other = new FlowTuple(ip("10.70.1.1"), ip("10.70.0.2"), 17, 5000, 53);
        agg.onNflog(nflog(1, "DPI|default", other));
        agg.onNflog(nflog(1, "API0|np/stranger/rule", other));
        Flow f = only(agg.flush(0, 15), Reporter.Dst, 53);
        PolicyHit eot = f.getKey().getPolicies().getEnforcedPolicies(0);
        assertThat(eot.getKind()).isEqualTo(PolicyKind.EndOfTier);
        assertThat(eot.getTier()).isEqualTo("default");
        assertThat(eot.getRuleIndex()).isEqualTo(-1);
        assertThat(eot.getTrigger().getName()).isEqualTo("api-in");
        assertThat(f.getKey().getProto()).isEqualTo("udp");
        assertThat(agg.unknownPrefixes()).isEqualTo(1);
    }

    @Test
    void addressesOutsideEveryEndpointArePublicOrPrivateNetworks() {
        assertThat(ctx.endpoint(ip("8.8.8.8")).name()).isEqualTo("pub");
        assertThat(ctx.endpoint(ip("192.168.3.4")).name()).isEqualTo("pvt");
        assertThat(ctx.endpoint(ip("10.70.0.2")).name()).isEqualTo("api");
        assertThat(FlowEndpoint.podName("prod/node--1-k8s-web--7d9f-eth0")).isEqualTo("web-7d9f");
    }

    @Test
    void flowsCarryEndpointLabelsAndPodsWithAGenerateNameAggregateUnderIt() {
        DataplaneModel m = model();
        m.apply(new DataplaneUpdate.WorkloadEndpointUpdate("dev/e2e--node-k8s-client--5f7c-eth0", "caliclient", null,
                List.of("10.70.1.1/32"), List.of(), List.of("kns.dev"), List.of(), List.of(),
                new DataplaneUpdate.EndpointIdentity(Map.of("app", "client", "version", "2"), "client-5f7c-")));
        m.apply(new DataplaneUpdate.WorkloadEndpointRemove("dev/e2e--node-k8s-client-eth0"));
        FlowContext c = FlowContext.of(m);
        assertThat(c.endpoint(ip("10.70.1.1")).name()).isEqualTo("client-5f7c-*");
        FlowAggregator a = new FlowAggregator(() -> c);
        Ruleset r = RuleRenderer.render(m, Set.of(IpFamily.V4));
        a.onNflog(nflog(2, renderedPrefix(r, Names.profileOutbound("kns.dev"), 0), to8080));
        a.onNflog(nflog(1, renderedPrefix(r, Names.policyInbound(ALLOW_80), 0), to8080));
        a.onConntrack(ct(to8080, 6, 400, 4, 2000, false));

        Flow dst = only(a.flush(1000, 1015), Reporter.Dst, 8080);
        assertThat(dst.getKey().getSourceName()).isEqualTo("client-5f7c-*");
        assertThat(dst.getSourceLabelsList()).containsExactly("app=client", "version=2");
        assertThat(dst.getDestLabelsList()).containsExactly("app=api", "projectcalico.org/namespace=prod");
    }

    static ConntrackEntry ct(FlowTuple original, FlowTuple reply, long op, long ob, long rp, long rb, long status,
                             int tcpState) {
        return new ConntrackEntry(original, reply, new ConntrackCounters(op, ob), new ConntrackCounters(rp, rb), 0, 9,
                status, false, tcpState);
    }

    static FlowLookups lookups() {
        FlowLookups l = new FlowLookups();
        l.apply(new DataplaneUpdate.FlowLookupUpdate("WorkloadEndpoint/shop/node--b-k8s-cart--6b7-x2-eth0",
                DataplaneUpdate.FlowLookupType.REMOTE_WORKLOAD, "node--b-k8s-cart--6b7-x2-eth0", "shop", "cart-6b7-",
                Map.of("app", "cart"), List.of("10.70.9.9/32")));
        l.apply(new DataplaneUpdate.FlowLookupUpdate("HostEndpoint/gw-eth0", DataplaneUpdate.FlowLookupType.HOST_ENDPOINT,
                "gw-eth0", "", "", Map.of("role", "gateway"), List.of("192.168.50.1")));
        l.apply(new DataplaneUpdate.FlowLookupUpdate("GlobalNetworkSet/cgnat", DataplaneUpdate.FlowLookupType.NETWORK_SET,
                "cgnat", "", "", Map.of("kind", "shared"), List.of("100.64.0.0/10")));
        l.apply(new DataplaneUpdate.FlowLookupUpdate("NetworkSet/prod/partner", DataplaneUpdate.FlowLookupType.NETWORK_SET,
                "partner", "prod", "", Map.of("tier", "partner"), List.of("100.64.8.0/24", "2001:db8::/32")));
        return l;
    }

    @Test
    void remoteWorkloadsHostEndpointsAndNetworkSetsAreLookedUpBeforeNetworksLongestPrefixFirst() {
        FlowLookups l = lookups();
        FlowContext c = FlowContext.of(model, l);
        FlowEndpoint cart = c.endpoint(ip("10.70.9.9"));
        assertThat(cart.type()).isEqualTo(FlowEndpoint.Type.WORKLOAD);
        assertThat(cart.name()).isEqualTo("cart-6b7-*");
        assertThat(cart.namespace()).isEqualTo("shop");
        assertThat(cart.labels()).containsExactly("app=cart");
        assertThat(cart.local()).isFalse();
        FlowEndpoint gw = c.endpoint(ip("192.168.50.1"));
        assertThat(gw.type()).isEqualTo(FlowEndpoint.Type.HOST_ENDPOINT);
        assertThat(gw.name()).isEqualTo("gw-eth0");
        assertThat(gw.labels()).containsExactly("role=gateway");
        // 100.64.8.5 is in both sets: the /24 wins over the /10.
        assertThat(c.endpoint(ip("100.64.8.5"))).satisfies(e -> {
            assertThat(e.type()).isEqualTo(FlowEndpoint.Type.NETWORK_SET);
            assertThat(e.name()).isEqualTo("partner");
            assertThat(e.namespace()).isEqualTo("prod");
        });
        assertThat(c.endpoint(ip("100.64.200.1")).name()).isEqualTo("cgnat");
        assertThat(c.endpoint(ip("2001:db8::5")).name()).isEqualTo("partner");
        assertThat(c.endpoint(ip("10.70.0.2")).name()).as("local endpoints first").isEqualTo("api");
        assertThat(c.endpoint(ip("10.99.0.1")).name()).isEqualTo("pvt");
        assertThat(c.endpoint(ip("8.8.8.8")).name()).isEqualTo("pub");
        assertThat(c.endpoint(ip("fd00::1")).name()).isEqualTo("pvt");

        // Live: a removal is seen without a new context; the /10 answers again.
        l.apply(new DataplaneUpdate.FlowLookupRemove("NetworkSet/prod/partner"));
        assertThat(c.endpoint(ip("100.64.8.5")).name()).isEqualTo("cgnat");
        assertThat(c.endpoint(ip("2001:db8::5")).name()).isEqualTo("pub");
        l.apply(new DataplaneUpdate.FlowLookupRemove("GlobalNetworkSet/cgnat"));
        assertThat(c.endpoint(ip("100.64.8.5")).name()).isEqualTo("pub");
        assertThat(l.size()).isEqualTo(2);

        // In flows: a remote pod as the source of an ingress flow, a network set as an egress destination.
        l.apply(new DataplaneUpdate.FlowLookupUpdate("NetworkSet/prod/partner", DataplaneUpdate.FlowLookupType.NETWORK_SET,
                "partner", "prod", "", Map.of("tier", "partner"), List.of("100.64.8.0/24")));
        FlowAggregator a = new FlowAggregator(() -> c);
        FlowTuple fromCart = new FlowTuple(ip("10.70.9.9"), ip("10.70.0.2"), 6, 41000, 8080);
        FlowTuple toPartner = new FlowTuple(ip("10.70.1.1"), ip("100.64.8.5"), 6, 41001, 443);
        a.onNflog(nflog(1, renderedPrefix(rendered, Names.policyInbound(ALLOW_80), 0), fromCart));
        a.onNflog(nflog(2, renderedPrefix(rendered, Names.profileOutbound("kns.dev"), 0), toPartner));
        List<Flow> flows = a.flush(1000, 1015);
        Flow in = only(flows, Reporter.Dst, 8080);
        assertThat(in.getKey().getSourceType()).isEqualTo(EndpointType.WorkloadEndpoint);
        assertThat(in.getKey().getSourceName()).isEqualTo("cart-6b7-*");
        assertThat(in.getKey().getSourceNamespace()).isEqualTo("shop");
        assertThat(in.getSourceLabelsList()).containsExactly("app=cart");
        Flow out = only(flows, Reporter.Src, 443);
        assertThat(out.getKey().getDestType()).isEqualTo(EndpointType.NetworkSet);
        assertThat(out.getKey().getDestName()).isEqualTo("partner");
        assertThat(out.getKey().getDestNamespace()).isEqualTo("prod");
        assertThat(out.getDestLabelsList()).containsExactly("tier=partner");
    }

    @Test
    void aLocalHostEndpointTakesItsLabelsFromTheLookups() {
        DataplaneModel m = model();
        m.apply(new DataplaneUpdate.HostEndpointUpdate("gw-eth0", "eth0", List.of("192.168.50.1"), List.of(),
                List.of(), List.of(), List.of()));
        FlowEndpoint gw = FlowContext.of(m, lookups()).endpoint(ip("192.168.50.1"));
        assertThat(gw.local()).isTrue();
        assertThat(gw.labels()).containsExactly("role=gateway");
        assertThat(FlowContext.of(m).endpoint(ip("192.168.50.1")).labels()).isEmpty();
    }

    @Test
    void tcpInTimeWaitIsCompletedNotLive() {
        String ingressAllow = renderedPrefix(rendered, Names.policyInbound(ALLOW_80), 0);
        agg.onNflog(nflog(1, ingressAllow, to8080));
        agg.onConntrackDump(List.of(ct(to8080, to8080.reversed(), 4, 300, 3, 500, 0xe, ConntrackEntry.TCP_ESTABLISHED)));
        Flow open = only(agg.flush(1000, 1015), Reporter.Dst, 8080);
        assertThat(open.getNumConnectionsLive()).isEqualTo(1);
        assertThat(open.getNumConnectionsCompleted()).isZero();
        assertThat(open.getKey().getDestServicePort()).as("no DNAT").isZero();

        // Closed: conntrack still lists the entry (TIME_WAIT lasts 2 minutes), but it is over.
        agg.onConntrackDump(List.of(ct(to8080, to8080.reversed(), 6, 400, 5, 600, 0xe, ConntrackEntry.TCP_TIME_WAIT)));
        Flow closed = only(agg.flush(1015, 1030), Reporter.Dst, 8080);
        assertThat(closed.getNumConnectionsLive()).isZero();
        assertThat(closed.getNumConnectionsCompleted()).isEqualTo(1);
        assertThat(closed.getNumConnectionsStarted()).isZero();
        assertThat(closed.getPacketsIn()).isEqualTo(2);
        // Still in the table next time: already reported and forgotten, nothing more.
        agg.onConntrackDump(List.of(ct(to8080, to8080.reversed(), 6, 400, 5, 600, 0xe, ConntrackEntry.TCP_TIME_WAIT)));
        assertThat(agg.flush(1030, 1045)).isEmpty();
        assertThat(agg.connections()).isZero();
    }

    /**
     * Issue 29: what conntrack held when collection started (a restarted felix) is adopted at the
     * first dump with the model in sync (before it, a workload may be unknown) and reported, marked
     * partial: counters since the connection began, action Allow, the trace the policy in force gives
     * it (none when that would deny it), once per local workload end; later flushes carry deltas
     * under the same key; a connection opened after the start (NFLOG saw it) stays complete; one no
     * local workload holds is not reported. An adopted connection is never counted as started (the
     * previous felix counted it): live while open, completed if it ends after the start; one already
     * over at the start (TIME_WAIT) is not reported at all.
     */
    @Test
    void connectionsInConntrackAtStartAreReportedAsPartialRecords() {
        FlowContext[] now = {ctx};
        FlowAggregator a = new FlowAggregator(() -> now[0]);
        FlowTuple seen = new FlowTuple(ip("10.70.1.1"), ip("10.70.0.2"), 6, 40009, 8080);
        a.onNflog(nflog(1, renderedPrefix(rendered, Names.policyInbound(ALLOW_80), 0), seen));
        FlowTuple stranger = new FlowTuple(ip("10.99.0.1"), ip("10.99.0.2"), 6, 5000, 22);
        FlowTuple endedBefore = new FlowTuple(ip("10.70.1.1"), ip("10.70.0.2"), 6, 40077, 8080);
        List<ConntrackEntry> atStart = List.of(
                ct(to8080, to8080.reversed(), 10, 1000, 8, 4000, 0xe, ConntrackEntry.TCP_ESTABLISHED),
                ct(to9000, to9000.reversed(), 3, 180, 2, 120, 0xe, ConntrackEntry.TCP_ESTABLISHED),
                ct(stranger, stranger.reversed(), 1, 60, 1, 60, 0xe, ConntrackEntry.TCP_ESTABLISHED),
                ct(endedBefore, endedBefore.reversed(), 4, 240, 3, 180, 0xe, ConntrackEntry.TCP_TIME_WAIT));
        // By the first dump 9000 has ended (after the start), endedBefore is still in TIME_WAIT.
        List<ConntrackEntry> table = List.of(atStart.get(0),
                ct(to9000, to9000.reversed(), 3, 180, 2, 120, 0xe, ConntrackEntry.TCP_TIME_WAIT),
                atStart.get(2), atStart.get(3),
                ct(seen, seen.reversed(), 1, 60, 1, 60, 0xe, ConntrackEntry.TCP_ESTABLISHED));
        a.onStart(atStart);
        a.onConntrackDump(table);
        assertThat(a.adoptPending()).as("the model is not in sync yet").isTrue();
        assertThat(a.flush(985, 1000)).noneMatch(f -> f.getKey().getPartial());

        DataplaneModel synced = model();
        synced.apply(new DataplaneUpdate.InSync());
        now[0] = FlowContext.of(synced);
        a.onConntrackDump(table);
        assertThat(a.adoptPending()).isFalse();
        List<Flow> first = a.flush(1000, 1015);
        Flow dst = first.stream().filter(f -> f.getKey().getPartial() && f.getKey().getReporter() == Reporter.Dst
                && f.getKey().getDestPort() == 8080).findFirst().orElseThrow();
        assertThat(dst.getKey().getAction()).isEqualTo(calico.libcalico.goldmane.proto.Action.Allow);
        assertThat(dst.getKey().getSourceName()).isEqualTo("client");
        assertThat(dst.getKey().getPolicies().getEnforcedPoliciesList()).as("derived from the policy in force")
                .extracting(PolicyHit::getName, PolicyHit::getRuleIndex).containsExactly(
                        org.assertj.core.groups.Tuple.tuple("api-in", 0L));
        assertThat(dst.getKey().getPolicies().getPendingPolicies(0).getName()).isEqualTo("api-lockdown");
        assertThat(List.of(dst.getPacketsIn(), dst.getBytesIn(), dst.getPacketsOut(), dst.getBytesOut()))
                .as("conntrack's counters since the connection began; nothing of the one over before the start")
                .containsExactly(10L, 1000L, 8L, 4000L);
        assertThat(first.stream().filter(f -> f.getKey().getPartial()).mapToLong(Flow::getNumConnectionsStarted).sum())
                .as("no adopted connection counted as started").isZero();
        assertThat(List.of(dst.getNumConnectionsStarted(), dst.getNumConnectionsLive(),
                dst.getNumConnectionsCompleted())).as("continuing: live, not started again").containsExactly(0L, 1L, 0L);
        Flow src = first.stream().filter(f -> f.getKey().getPartial() && f.getKey().getReporter() == Reporter.Src
                && f.getKey().getDestPort() == 8080).findFirst().orElseThrow();
        assertThat(src.getPacketsOut()).as("the client's end: original direction out").isEqualTo(10);
        assertThat(src.getKey().getPolicies().getEnforcedPolicies(0).getKind()).isEqualTo(PolicyKind.Profile);
        Flow closed = only(first, Reporter.Dst, 9000);
        assertThat(closed.getKey().getPartial()).isTrue();
        assertThat(closed.getKey().getAction()).as("its packets went through").isEqualTo(
                calico.libcalico.goldmane.proto.Action.Allow);
        assertThat(closed.getKey().getPolicies().getEnforcedPoliciesList()).as("policy now denies 9000: unknown")
                .isEmpty();
        assertThat(List.of(closed.getNumConnectionsStarted(), closed.getNumConnectionsCompleted(),
                closed.getNumConnectionsLive(), closed.getPacketsIn())).as("ended after the start: completed only")
                .containsExactly(0L, 1L, 0L, 3L);
        assertThat(first).as("the stranger is nobody's; the connection NFLOG saw is complete")
                .noneMatch(f -> f.getKey().getDestPort() == 22)
                .filteredOn(f -> f.getKey().getDestPort() == 8080 && !f.getKey().getPartial()).hasSize(1);

        a.onConntrackDump(List.of(ct(to8080, to8080.reversed(), 12, 1100, 9, 4100, 0xe,
                ConntrackEntry.TCP_ESTABLISHED)));
        Flow next = a.flush(1015, 1030).stream().filter(f -> f.getKey().getPartial()
                && f.getKey().getReporter() == Reporter.Dst).findFirst().orElseThrow();
        assertThat(next.getKey()).as("the same key: still partial").isEqualTo(dst.getKey());
        assertThat(List.of(next.getPacketsIn(), next.getBytesIn(), next.getNumConnectionsStarted()))
                .as("deltas now").containsExactly(2L, 100L, 0L);
    }

    @Test
    void aDnatConnectionIsJoinedByItsRealDestinationAndCarriesTheServicePort() {
        // kube-proxy style: the client dialled the VIP 10.96.0.10:80, DNAT sent it to api:8080,
        // where the ingress policy logged the post-DNAT tuple.
        FlowTuple vip = new FlowTuple(ip("10.70.1.1"), ip("10.96.0.10"), 6, 40005, 80);
        FlowTuple post = new FlowTuple(ip("10.70.1.1"), ip("10.70.0.2"), 6, 40005, 8080);
        FlowTuple reply = new FlowTuple(ip("10.70.0.2"), ip("10.70.1.1"), 6, 8080, 40005);
        agg.onNflog(nflog(1, renderedPrefix(rendered, Names.policyInbound(ALLOW_80), 0), post));
        agg.onConntrackDump(List.of(ct(vip, reply, 5, 300, 3, 900, 0xe | ConntrackEntry.STATUS_DST_NAT,
                ConntrackEntry.TCP_ESTABLISHED)));
        assertThat(agg.preDnat(post, true)).isEqualTo("10.96.0.10:80");
        Flow f = only(agg.flush(1000, 1015), Reporter.Dst, 8080);
        assertThat(f.getPacketsIn()).isEqualTo(5);
        assertThat(f.getBytesOut()).isEqualTo(900);
        assertThat(f.getNumConnectionsLive()).as("the dump holds it: not ended").isEqualTo(1);
        assertThat(f.getKey().getDestName()).isEqualTo("api");
        assertThat(f.getKey().getDestServicePort()).isEqualTo(80);
        assertThat(f.getKey().getDestServiceName()).as("no Service known for 10.96.0.10:80").isEmpty();
        assertThat(f.getDestIpsList()).containsExactly("10.70.0.2");
        // The entry leaves the table: completed.
        agg.onConntrackDump(List.of());
        assertThat(only(agg.flush(1015, 1030), Reporter.Dst, 8080).getNumConnectionsCompleted()).isEqualTo(1);
    }

    @Test
    void aDnatConnectionToAKnownServiceCarriesItsNameNamespaceAndPortName() {
        FlowLookups l = new FlowLookups();
        l.apply(new DataplaneUpdate.ServiceLookupUpdate("KubernetesService/prod/api", "prod", "api",
                List.of("10.96.0.10"), List.of(new DataplaneUpdate.ServicePortLookup("http", 6, 80, 30080))));
        FlowContext c = FlowContext.of(model, l);
        FlowAggregator a = new FlowAggregator(() -> c);
        FlowTuple vip = new FlowTuple(ip("10.70.1.1"), ip("10.96.0.10"), 6, 40005, 80);
        FlowTuple post = new FlowTuple(ip("10.70.1.1"), ip("10.70.0.2"), 6, 40005, 8080);
        FlowTuple reply = post.reversed();
        a.onNflog(nflog(1, renderedPrefix(rendered, Names.policyInbound(ALLOW_80), 0), post));
        a.onConntrackDump(List.of(ct(vip, reply, 5, 300, 3, 900, 0xe | ConntrackEntry.STATUS_DST_NAT,
                ConntrackEntry.TCP_ESTABLISHED)));
        Flow f = only(a.flush(1000, 1015), Reporter.Dst, 8080);
        assertThat(f.getKey().getDestServiceNamespace()).isEqualTo("prod");
        assertThat(f.getKey().getDestServiceName()).isEqualTo("api");
        assertThat(f.getKey().getDestServicePortName()).isEqualTo("http");
        assertThat(f.getKey().getDestServicePort()).isEqualTo(80);
        // Found once, kept: the service going away does not move the live connection to another flow key.
        l.apply(new DataplaneUpdate.FlowLookupRemove("KubernetesService/prod/api"));
        assertThat(only(a.flush(1015, 1030), Reporter.Dst, 8080).getKey()).isEqualTo(f.getKey());

        // A NodePort: the client dialled a node's address on 30080, DNAT'd to the same endpoint.
        l.apply(new DataplaneUpdate.ServiceLookupUpdate("KubernetesService/prod/api", "prod", "api",
                List.of("10.96.0.10"), List.of(new DataplaneUpdate.ServicePortLookup("http", 6, 80, 30080))));
        FlowTuple nodePort = new FlowTuple(ip("10.70.1.1"), ip("192.168.1.5"), 6, 40006, 30080);
        FlowTuple post2 = new FlowTuple(ip("10.70.1.1"), ip("10.70.0.2"), 6, 40006, 8080);
        a.onNflog(nflog(1, renderedPrefix(rendered, Names.policyInbound(ALLOW_80), 0), post2));
        a.onConntrackDump(List.of(ct(nodePort, post2.reversed(), 1, 60, 1, 60, 0xe | ConntrackEntry.STATUS_DST_NAT,
                ConntrackEntry.TCP_ESTABLISHED)));
        assertThat(a.flush(1030, 1045)).filteredOn(x -> x.getKey().getDestServicePort() == 30080).singleElement()
                .satisfies(x -> assertThat(x.getKey().getDestServiceName()).isEqualTo("api"));
    }
}
