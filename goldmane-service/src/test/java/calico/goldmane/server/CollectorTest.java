package calico.goldmane.server;

import static calico.goldmane.server.TestFlows.flow;
import static calico.goldmane.server.TestFlows.key;
import static org.assertj.core.api.Assertions.assertThat;

import calico.goldmane.store.Buckets;
import calico.libcalico.goldmane.proto.Action;
import calico.libcalico.goldmane.proto.Flow;
import calico.libcalico.goldmane.proto.FlowListRequest;
import calico.libcalico.goldmane.proto.FlowListResult;
import calico.libcalico.goldmane.proto.FlowUpdate;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.MutableClock;
import io.grpc.Status;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The collector contract: cumulative acks; a replay after a reconnect or a restart (from the
 * snapshot on disk) counts nothing twice and loses nothing.
 */
class CollectorTest {

    @TempDir
    Path dir;
    private Goldmane gm;

    @AfterEach
    void stop() {
        if (gm != null) {
            gm.close();
        }
    }

    private static List<Flow> report(long start, int keys, long packets) {
        var out = new ArrayList<Flow>();
        for (int i = 0; i < keys; i++) {
            out.add(flow(key("ns", "client-", "ns", "server-" + i + "-", 8080, Action.Allow), start, start + 10,
                    packets, packets * 100).build());
        }
        return out;
    }

    private long packets(FlowListResult r) {
        return r.getFlowsList().stream().mapToLong(f -> f.getFlow().getPacketsIn()).sum();
    }

    private FlowListResult all() {
        return gm.flows().list(FlowListRequest.getDefaultInstance());
    }

    @Test
    void replayAfterReconnectCountsNothingTwice() throws Exception {
        gm = Goldmane.start();
        long t = gm.now();
        List<Flow> first = report(t, 50, 2);
        try (FelixClient felix = new FelixClient(gm.collector(), "node-1")) {
            felix.sendAndAwaitAcks(first);
            assertThat(felix.acked()).isEqualTo(50);
        }
        // Reconnect: the replay cache goes out again, then a new report.
        List<Flow> next = report(t + 5, 1, 7);
        try (FelixClient felix = new FelixClient(gm.collector(), "node-1")) {
            var replay = new ArrayList<>(first);
            replay.addAll(next);
            felix.sendAndAwaitAcks(replay);
        }
        assertThat(packets(all())).isEqualTo(50 * 2 + 7);
        assertThat(gm.meters.get("goldmane_aggr_duplicate_flows").counter().count()).isEqualTo(50);
        // The same report from another node is another report.
        try (FelixClient other = new FelixClient(gm.collector(), "node-2")) {
            other.sendAndAwaitAcks(first.subList(0, 1));
        }
        assertThat(packets(all())).isEqualTo(50 * 2 + 7 + 2);
        assertThat(gm.meters.get("goldmane_aggr_received_flows").counter().count()).isEqualTo(50 + 51 + 1);
    }

    @Test
    void restartFromSnapshotThenReplayCountsEachReportOnce() throws Exception {
        MutableClock clock = new MutableClock(Goldmane.T0);
        Buckets buckets = new Buckets(15, 240, 20);
        gm = new Goldmane(clock, buckets, dir, null);
        long t = gm.now();
        List<Flow> closedBucket = report(t, 20, 3);
        List<Flow> openBucket;
        try (FelixClient felix = new FelixClient(gm.collector(), "node-1")) {
            felix.sendAndAwaitAcks(closedBucket);
            gm.advance(Duration.ofSeconds(15));
            openBucket = report(gm.now(), 10, 5);
            felix.sendAndAwaitAcks(openBucket);
        }
        long before = packets(all());
        assertThat(before).isEqualTo(20 * 3 + 10 * 5);
        Path file = dir.resolve("bucket-" + buckets.start(buckets.index(t)) + ".snap");
        Await.until("the closed bucket's snapshot " + file, Duration.ofSeconds(10), () -> Files.exists(file));

        // Crash: the open bucket is not saved. Restart on the same directory.
        gm.close();
        gm = new Goldmane(clock, buckets, dir, null);
        assertThat(packets(all())).isEqualTo(20 * 3);
        var ids = all().getFlowsList().stream().map(f -> f.getFlow().getKey().getDestName()).toList();
        assertThat(ids).hasSize(20);

        // Felix replays its whole cache: the closed bucket's reports are known, the open one's are new again.
        try (FelixClient felix = new FelixClient(gm.collector(), "node-1")) {
            var replay = new ArrayList<>(closedBucket);
            replay.addAll(openBucket);
            felix.sendAndAwaitAcks(replay);
        }
        assertThat(packets(all())).isEqualTo(before);
        assertThat(gm.meters.get("goldmane_aggr_duplicate_flows").counter().count()).isEqualTo(20);
    }

    @Test
    void sequenceMustIncreaseWithinAStream() throws Exception {
        gm = Goldmane.start();
        try (FelixClient felix = new FelixClient(gm.collector(), "node-1")) {
            Flow f = report(gm.now(), 1, 1).get(0);
            felix.sendRaw(FlowUpdate.newBuilder().setFlow(f).setSeq(5).build());
            felix.sendRaw(FlowUpdate.newBuilder().setFlow(f).setSeq(5).build());
            Status s = felix.ended.get(10, TimeUnit.SECONDS);
            assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(s.getDescription()).startsWith("seq:");
        }
    }

    @Test
    void nodeDefaultsToThePeerAddress() throws Exception {
        gm = Goldmane.start();
        Flow f = report(gm.now(), 1, 4).get(0);
        try (FelixClient felix = new FelixClient(gm.collector(), "")) {
            felix.sendAndAwaitAcks(List.of(f));
        }
        try (FelixClient felix = new FelixClient(gm.collector(), "")) {
            felix.sendAndAwaitAcks(List.of(f)); // same peer IP: a replay
        }
        assertThat(packets(all())).isEqualTo(4);
    }
}
