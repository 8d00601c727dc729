package calico.goldmane.server;

import static calico.goldmane.server.TestFlows.flow;
import static calico.goldmane.server.TestFlows.key;
import static org.assertj.core.api.Assertions.assertThat;

import calico.libcalico.goldmane.proto.Action;
import calico.libcalico.goldmane.proto.Filter;
import calico.libcalico.goldmane.proto.FlowResult;
import calico.libcalico.goldmane.proto.FlowStreamRequest;
import calico.libcalico.goldmane.proto.FlowsGrpc;
import calico.libcalico.goldmane.proto.StringMatch;
import calico.libcalico.testing.Await;
import io.grpc.Context;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Stream: backfill from a start time, then each bucket as it closes, exactly once, per filter. */
class StreamTest {

    private Goldmane gm;

    @BeforeEach
    void start() {
        gm = Goldmane.start();
    }

    @AfterEach
    void stop() {
        gm.close();
    }

    private static final class Recorder implements StreamObserver<FlowResult> {
        final List<FlowResult> got = new CopyOnWriteArrayList<>();
        volatile Throwable error;

        @Override
        public void onNext(FlowResult r) {
            got.add(r);
        }

        @Override
        public void onError(Throwable t) {
            error = t;
        }

        @Override
        public void onCompleted() {
        }

        List<String> dests() {
            return got.stream().map(r -> r.getFlow().getKey().getDestName() + "@" + r.getFlow().getStartTime())
                    .toList();
        }
    }

    private Context.CancellableContext open(FlowStreamRequest r, Recorder rec) {
        Context.CancellableContext ctx = Context.current().withCancellation();
        ctx.run(() -> FlowsGrpc.newStub(gm.channel()).stream(r, rec));
        return ctx;
    }

    private static void await(Recorder r, int n) {
        Await.until(n + " stream results (or an error)", Duration.ofSeconds(30),
                () -> r.got.size() >= n || r.error != null);
        assertThat(r.error).isNull();
        assertThat(r.got).hasSizeGreaterThanOrEqualTo(n);
    }

    /**
     * Closes one more window holding {@code dest} and waits for it on every recorder: windows
     * reach a stream in order, so anything still due from earlier windows (a duplicate, a stray
     * flow) has arrived by then. The event that shows nothing more is coming.
     */
    private void closeMarkerWindow(String dest, List<Recorder> recs, int want) throws Exception {
        long t = gm.now();
        gm.ingest(flow(key("a", "x-", "b", dest, 80, Action.Allow), t, t + 10, 1, 10));
        gm.advance(Duration.ofSeconds(15));
        for (Recorder r : recs) {
            await(r, want);
        }
    }

    private long bucketStart(long t) {
        return gm.buckets.start(gm.buckets.index(t));
    }

    @Test
    void backfillThenLiveWindowsExactlyOnce() throws Exception {
        long t0 = gm.now();
        gm.ingest(flow(key("a", "x-", "b", "old-", 80, Action.Allow), t0, t0 + 10, 1, 10));
        gm.advance(Duration.ofSeconds(15));
        long t1 = gm.now();
        // Data in the open bucket is not backfilled: it arrives when the bucket closes.
        gm.ingest(flow(key("a", "x-", "b", "open-", 80, Action.Allow), t1, t1 + 10, 1, 10));
        Recorder rec = new Recorder();
        var ctx = open(FlowStreamRequest.newBuilder().setStartTimeGte(-300).build(), rec);
        await(rec, 1);
        assertThat(rec.dests().get(0)).isEqualTo("old-@" + bucketStart(t0));
        gm.advance(Duration.ofSeconds(15));
        long t2 = gm.now();
        gm.ingest(flow(key("a", "x-", "b", "new-", 80, Action.Allow), t2, t2 + 10, 1, 10));
        gm.advance(Duration.ofSeconds(15));
        await(rec, 3);
        long t3 = gm.now();
        closeMarkerWindow("marker-", List.of(rec), 4);
        assertThat(rec.dests()).containsExactly("old-@" + bucketStart(t0), "open-@" + bucketStart(t1),
                "new-@" + bucketStart(t2), "marker-@" + bucketStart(t3));
        assertThat(rec.got.get(1).getFlow().getEndTime() - rec.got.get(1).getFlow().getStartTime()).isEqualTo(15);
        ctx.cancel(null);
    }

    @Test
    void liveOnlyWithFilter() throws Exception {
        long t0 = gm.now();
        gm.ingest(flow(key("a", "x-", "b", "old-", 80, Action.Allow), t0, t0 + 10, 1, 10));
        Recorder rec = new Recorder();
        var ctx = open(FlowStreamRequest.newBuilder().setFilter(Filter.newBuilder().addDestNames(StringMatch
                .newBuilder().setValue("keep-"))).build(), rec);
        gm.ingest(flow(key("a", "x-", "b", "keep-", 80, Action.Allow), t0, t0 + 10, 1, 10),
                flow(key("a", "x-", "b", "drop-", 80, Action.Allow), t0, t0 + 10, 1, 10));
        gm.awaitStreamsLive(1); // before the bucket closes
        gm.advance(Duration.ofSeconds(15));
        await(rec, 1);
        long t1 = gm.now();
        gm.ingest(flow(key("a", "x-", "b", "drop-", 80, Action.Allow), t1, t1 + 10, 1, 10));
        closeMarkerWindow("keep-", List.of(rec), 2);
        assertThat(rec.dests()).containsExactly("keep-@" + bucketStart(t0), "keep-@" + bucketStart(t1));
        ctx.cancel(null);
    }

    @Test
    void hundredConcurrentStreamsEachGetEveryWindow() throws Exception {
        long t0 = gm.now();
        for (int i = 0; i < 20; i++) {
            gm.ingest(flow(key("a", "x-", "b", "d" + i + "-", 80, Action.Allow), t0, t0 + 10, 1, 10));
        }
        gm.advance(Duration.ofSeconds(15));
        var recs = new ArrayList<Recorder>();
        var ctxs = new ArrayList<Context.CancellableContext>();
        for (int i = 0; i < 100; i++) {
            Recorder r = new Recorder();
            recs.add(r);
            ctxs.add(open(FlowStreamRequest.newBuilder().setStartTimeGte(-600).build(), r));
        }
        for (Recorder r : recs) {
            await(r, 20); // backfill
        }
        Await.until("100 streams open", Duration.ofSeconds(10), () -> gm.server.streams() >= 100);
        gm.awaitStreamsLive(100);
        assertThat(gm.server.streams()).isEqualTo(100);
        assertThat(gm.meters.get("goldmane_num_streams").gauge().value()).isEqualTo(100);
        long t1 = gm.now();
        for (int i = 0; i < 20; i++) {
            gm.ingest(flow(key("a", "x-", "b", "d" + i + "-", 80, Action.Allow), t1, t1 + 10, 1, 10));
        }
        gm.advance(Duration.ofSeconds(15));
        for (Recorder r : recs) {
            await(r, 40);
        }
        closeMarkerWindow("marker-", recs, 41);
        for (Recorder r : recs) {
            assertThat(r.got).hasSize(41);
            assertThat(r.got.stream().map(x -> x.getId() + "@" + x.getFlow().getStartTime()).distinct().count())
                    .isEqualTo(41);
        }
        ctxs.forEach(c -> c.cancel(null));
        Await.until("every stream closed", Duration.ofSeconds(10), () -> gm.server.streams() == 0);
        assertThat(gm.meters.get("goldmane_num_streams").gauge().value()).isZero();
    }
}
