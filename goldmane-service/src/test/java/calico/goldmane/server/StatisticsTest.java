package calico.goldmane.server;

import static calico.goldmane.server.TestFlows.flow;
import static calico.goldmane.server.TestFlows.hit;
import static calico.goldmane.server.TestFlows.key;
import static org.assertj.core.api.Assertions.assertThat;

import calico.libcalico.goldmane.proto.Action;
import calico.libcalico.goldmane.proto.PolicyKind;
import calico.libcalico.goldmane.proto.PolicyMatch;
import calico.libcalico.goldmane.proto.PolicyTrace;
import calico.libcalico.goldmane.proto.Reporter;
import calico.libcalico.goldmane.proto.RuleDirection;
import calico.libcalico.goldmane.proto.StatisticType;
import calico.libcalico.goldmane.proto.StatisticsGroupBy;
import calico.libcalico.goldmane.proto.StatisticsRequest;
import calico.libcalico.goldmane.proto.StatisticsResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Statistics per policy and per rule, totals and time series. */
class StatisticsTest {

    private Goldmane gm;
    private long b0;

    @BeforeEach
    void start() throws Exception {
        gm = Goldmane.start();
        long t = gm.now();
        b0 = gm.buckets.start(gm.buckets.index(t));
        // Two tiers: a pass in "security", then allow (rule 0) or deny (rule 1) in "default".
        var trace = PolicyTrace.newBuilder()
                .addEnforcedPolicies(hit(PolicyKind.GlobalNetworkPolicy, "security", "", "pass-all", Action.Pass, 0, 0));
        var allow = key("a", "x-", "b", "db-", 5432, Action.Allow).setPolicies(trace.clone()
                .addEnforcedPolicies(hit(PolicyKind.CalicoNetworkPolicy, "default", "b", "db", Action.Allow, 1, 0)));
        var deny = key("a", "x-", "b", "db-", 22, Action.Deny).setPolicies(trace.clone()
                .addEnforcedPolicies(hit(PolicyKind.CalicoNetworkPolicy, "default", "b", "db", Action.Deny, 1, 1)));
        var egress = key("a", "x-", "b", "db-", 5432, Action.Allow).setReporter(Reporter.Src).setPolicies(
                PolicyTrace.newBuilder().addEnforcedPolicies(hit(PolicyKind.CalicoNetworkPolicy, "default", "a",
                        "x-out", Action.Allow, 0, 3)));
        gm.ingest(flow(allow, t, t + 10, 10, 1000), flow(deny, t, t + 10, 1, 60), flow(egress, t, t + 10, 4, 400));
        gm.advance(Duration.ofSeconds(15));
        gm.ingest(flow(allow, gm.now(), gm.now() + 10, 20, 2000));
    }

    @AfterEach
    void stop() {
        gm.close();
    }

    private List<StatisticsResult> stats(StatisticsRequest.Builder r) {
        var out = new ArrayList<StatisticsResult>();
        gm.statistics().list(r.build()).forEachRemaining(out::add);
        return out;
    }

    @Test
    void perPolicyTotals() {
        var r = stats(StatisticsRequest.newBuilder().setGroupBy(StatisticsGroupBy.Policy)
                .setType(StatisticType.PacketCount));
        assertThat(r).extracting(s -> s.getPolicy().getName()).containsExactly("x-out", "db", "pass-all"); // tier, namespace, name
        StatisticsResult db = r.get(1);
        assertThat(db.getDirection()).isEqualTo(RuleDirection.Any);
        assertThat(db.getAllowedInList()).containsExactly(30L);
        assertThat(db.getDeniedInList()).containsExactly(1L);
        assertThat(db.getPassedInList()).containsExactly(0L);
        assertThat(db.getXList()).isEmpty();
        StatisticsResult pass = r.get(2);
        assertThat(pass.getPassedInList()).containsExactly(31L);
        assertThat(pass.getAllowedInList()).containsExactly(0L);
    }

    @Test
    void perRuleWithDirectionAndBytes() {
        var r = stats(StatisticsRequest.newBuilder().setGroupBy(StatisticsGroupBy.PolicyRule)
                .setType(StatisticType.ByteCount).setPolicyMatch(PolicyMatch.newBuilder().setTier("default")));
        assertThat(r).extracting(s -> s.getPolicy().getName() + "/" + s.getPolicy().getRuleIndex() + "/"
                + s.getDirection()).containsExactlyInAnyOrder("db/0/Ingress", "db/1/Ingress", "x-out/3/Egress");
        StatisticsResult deny = r.stream().filter(s -> s.getPolicy().getRuleIndex() == 1).findFirst().orElseThrow();
        assertThat(deny.getDeniedOutList()).containsExactly(60L);
        assertThat(deny.getAllowedOutList()).containsExactly(0L);
    }

    @Test
    void timeSeriesHasOnePointPerBucket() {
        var r = stats(StatisticsRequest.newBuilder().setStartTimeGte(b0).setTimeSeries(true)
                .setPolicyMatch(PolicyMatch.newBuilder().setName("db").setAction(Action.Allow)));
        assertThat(r).hasSize(1);
        assertThat(r.get(0).getXList()).containsExactly(b0, b0 + 15);
        assertThat(r.get(0).getAllowedInList()).containsExactly(10L, 20L);
        assertThat(r.get(0).getDeniedInList()).containsExactly(0L, 0L);
    }
}
