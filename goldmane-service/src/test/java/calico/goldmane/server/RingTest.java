package calico.goldmane.server;

import static calico.goldmane.server.TestFlows.flow;
import static calico.goldmane.server.TestFlows.key;
import static org.assertj.core.api.Assertions.assertThat;

import calico.goldmane.store.Buckets;
import calico.libcalico.goldmane.proto.Action;
import calico.libcalico.goldmane.proto.Flow;
import calico.libcalico.goldmane.proto.FlowListRequest;
import calico.libcalico.testing.MutableClock;
import io.micrometer.core.instrument.search.Search;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Rollover, retention, late and too-old flows, label intersection and the capped IP sets. */
class RingTest {

    private Goldmane gm;

    @AfterEach
    void stop() {
        if (gm != null) {
            gm.close();
        }
    }

    private long total() {
        return gm.flows().list(FlowListRequest.getDefaultInstance()).getMeta().getTotalResults();
    }

    @Test
    void retentionDropsBucketsThatFallOutOfTheRing() throws Exception {
        // 4 buckets retained (1 min), replay 2 buckets.
        gm = new Goldmane(new MutableClock(Goldmane.T0), new Buckets(15, 4, 2), null, null);
        long t = gm.now();
        gm.ingest(flow(key("a", "x-", "b", "y-", 80, Action.Allow), t, t + 15, 1, 10));
        gm.advance(Duration.ofSeconds(15));
        gm.ingest(flow(key("a", "x-", "b", "z-", 80, Action.Allow), gm.now(), gm.now() + 15, 1, 10));
        assertThat(total()).isEqualTo(2);
        gm.advance(Duration.ofSeconds(30));
        assertThat(total()).isEqualTo(2);
        gm.advance(Duration.ofSeconds(15)); // first bucket now 4 back: gone
        assertThat(total()).isEqualTo(1);
        assertThat(Search.in(gm.meters).name("goldmane_aggr_rollovers").counter().count()).isEqualTo(4);
        gm.advance(Duration.ofSeconds(15));
        assertThat(total()).isZero();
        assertThat(gm.meters.get("goldmane_aggr_num_unique_flows").gauge().value()).isZero();
    }

    @Test
    void lateFlowsLandInTheirBucketAndTooOldOnesAreDropped() throws Exception {
        gm = new Goldmane(new MutableClock(Goldmane.T0), new Buckets(15, 8, 2), null, null);
        long t0 = gm.now();
        gm.advance(Duration.ofSeconds(45));
        // One bucket back: within the replay horizon of two buckets.
        gm.ingest(flow(key("a", "x-", "b", "y-", 80, Action.Allow), gm.now() - 15, gm.now() - 5, 1, 10));
        // Three buckets back: too old.
        gm.ingest(flow(key("a", "x-", "b", "y-", 80, Action.Allow), t0, t0 + 10, 1, 10));
        var r = gm.flows().list(FlowListRequest.getDefaultInstance());
        assertThat(r.getFlowsCount()).isEqualTo(1);
        long late = gm.buckets.start(gm.buckets.index(gm.now() - 15));
        assertThat(r.getFlows(0).getFlow().getStartTime()).isEqualTo(late);
        assertThat(gm.meters.get("goldmane_aggr_dropped_flows").tag("reason", "too_old").counter().count())
                .isEqualTo(1);
        // A start in the future counts into the open bucket.
        gm.ingest(flow(key("a", "x-", "b", "w-", 80, Action.Allow), gm.now() + 600, gm.now() + 610, 1, 10));
        var future = gm.flows().list(FlowListRequest.newBuilder().setStartTimeGte(-5).build());
        assertThat(future.getFlows(0).getFlow().getKey().getDestName()).isEqualTo("w-");
    }

    @Test
    void invalidFlowsAreCountedAsDroppedNotStored() throws Exception {
        gm = Goldmane.start();
        long t = gm.now();
        gm.ingest(Flow.newBuilder().setStartTime(t).setEndTime(t + 1), // no key
                flow(key("a", "x-", "b", "y-", 80, Action.Allow), t, t - 1, 1, 1), // ends before it starts
                flow(key("a", "x-", "b", "y-", 80, Action.Allow), t, t + 1, -1, 1)); // negative counter
        assertThat(total()).isZero();
        assertThat(gm.meters.get("goldmane_aggr_dropped_flows").tag("reason", "invalid").counter().count())
                .isEqualTo(3);
    }

    @Test
    void labelsIntersectAndIpsAreCappedAndKeptOutOfTheKey() throws Exception {
        gm = Goldmane.start();
        long t = gm.now();
        var k = key("a", "x-", "b", "y-", 80, Action.Allow);
        gm.ingest(flow(k, t, t + 10, 1, 10).addSourceLabels("app=x").addSourceLabels("pod=1").addDestLabels("app=y")
                        .addSourceIps("10.0.0.1").addDestIps("10.0.1.1"),
                flow(k, t, t + 10, 1, 10).addSourceLabels("pod=2").addSourceLabels("app=x").addDestLabels("app=y")
                        .addSourceIps("10.0.0.2").addDestIps("10.0.1.1"));
        gm.advance(Duration.ofSeconds(15));
        gm.ingest(flow(k, gm.now(), gm.now() + 10, 1, 10).addSourceLabels("app=x").addAllSourceIps(java.util.List.of(
                "10.0.0.3", "10.0.0.4", "10.0.0.5", "10.0.0.6", "10.0.0.7")));
        var all = gm.flows().list(FlowListRequest.getDefaultInstance());
        assertThat(all.getFlowsCount()).isEqualTo(1);
        Flow f = all.getFlows(0).getFlow();
        assertThat(f.getSourceLabelsList()).containsExactly("app=x");
        assertThat(f.getDestLabelsList()).isEmpty(); // the second bucket had no dest labels
        // Cap of 5 in the fixture: the two seen least recently made room.
        assertThat(f.getSourceIpsList()).containsExactly("10.0.0.3", "10.0.0.4", "10.0.0.5", "10.0.0.6", "10.0.0.7");
        var first = gm.flows().list(FlowListRequest.newBuilder()
                .setStartTimeLt(gm.buckets.start(gm.buckets.index(gm.now()))).build()).getFlows(0).getFlow();
        assertThat(first.getSourceLabelsList()).containsExactly("app=x");
        assertThat(first.getDestLabelsList()).containsExactly("app=y");
        assertThat(first.getDestIpsList()).containsExactly("10.0.1.1");
        assertThat(first.getPacketsIn()).isEqualTo(2);
    }

    @Test
    void wholeLifeListsMatchTheRowWalkAfterExpiry() throws Exception {
        // 4 buckets retained. A key in every bucket; the oldest bucket has the narrowest labels and
        // an address seen only there. The default List (whole retention) reads running totals and
        // cached labels; a range that starts inside the key's life walks the rows: both must agree,
        // before and after the oldest bucket expires.
        gm = new Goldmane(new MutableClock(Goldmane.T0), new Buckets(15, 4, 2), null, null);
        var k = key("a", "x-", "b", "y-", 80, Action.Allow);
        gm.ingest(flow(k, gm.now(), gm.now() + 10, 1, 100).addSourceLabels("app=x").addSourceIps("10.0.0.9"));
        for (int i = 2; i <= 4; i++) {
            gm.advance(Duration.ofSeconds(15));
            gm.ingest(flow(k, gm.now(), gm.now() + 10, i, 100L * i).addSourceLabels("app=x")
                    .addSourceLabels("pod=1").addSourceIps("10.0.0.1"));
        }
        Flow whole = gm.flows().list(FlowListRequest.getDefaultInstance()).getFlows(0).getFlow();
        assertThat(whole.getPacketsIn()).isEqualTo(1 + 2 + 3 + 4);
        assertThat(whole.getBytesOut()).isEqualTo(100 + 200 + 300 + 400);
        assertThat(whole.getSourceLabelsList()).containsExactly("app=x");
        assertThat(whole.getSourceIpsList()).containsExactly("10.0.0.1", "10.0.0.9");

        gm.advance(Duration.ofSeconds(15)); // the first bucket leaves the ring
        gm.ingest(flow(k, gm.now(), gm.now() + 10, 5, 500).addSourceLabels("app=x").addSourceLabels("pod=1")
                .addSourceIps("10.0.0.1"));
        whole = gm.flows().list(FlowListRequest.getDefaultInstance()).getFlows(0).getFlow();
        assertThat(whole.getPacketsIn()).isEqualTo(2 + 3 + 4 + 5);
        assertThat(whole.getBytesIn()).isEqualTo(200 + 300 + 400 + 500);
        assertThat(whole.getNumConnectionsStarted()).isEqualTo(4);
        assertThat(whole.getSourceLabelsList()).containsExactly("app=x", "pod=1"); // widened again
        assertThat(whole.getSourceIpsList()).containsExactly("10.0.0.1");
        // From the second retained bucket on: the row walk, not the totals.
        long second = gm.buckets.start(gm.buckets.index(gm.now()) - 2);
        Flow part = gm.flows().list(FlowListRequest.newBuilder().setStartTimeGte(second).build()).getFlows(0)
                .getFlow();
        assertThat(part.getPacketsIn()).isEqualTo(3 + 4 + 5);
        assertThat(part.getSourceLabelsList()).containsExactly("app=x", "pod=1");
    }
}
