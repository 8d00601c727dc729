package calico.whisker.browser;

import calico.goldmane.engine.Aggregator;
import calico.goldmane.query.Requests;
import calico.goldmane.server.GoldmaneMetrics;
import calico.goldmane.server.GoldmaneServer;
import calico.goldmane.store.Buckets;
import calico.goldmane.store.FlowStore;
import calico.libcalico.goldmane.proto.Flow;
import calico.libcalico.goldmane.proto.FlowCollectorGrpc;
import calico.libcalico.goldmane.proto.FlowReceipt;
import calico.libcalico.goldmane.proto.FlowUpdate;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A real goldmane (goldmane-service's writer, ring and gRPC server on loopback) on the wall
 * clock, so that buckets close by themselves and live mode streams while the browser watches.
 * Fed like felix feeds it: FlowUpdates over FlowCollector.Connect, waiting for the receipts.
 */
final class BrowserGoldmane implements AutoCloseable {

    /** Short buckets: a live flow reaches the browser within about two windows. */
    static final int WINDOW_SECONDS = 2;

    private final Aggregator aggregator;
    private final GoldmaneServer server;
    private final ManagedChannel feedChannel;
    private final StreamObserver<FlowUpdate> feed;
    private final AtomicLong acked = new AtomicLong();
    private long seq;

    BrowserGoldmane(int maxPageSize) {
        Clock clock = Clock.systemUTC();
        // 1 h retained, 10 min accepted back (the fixtures start up to 8 min in the past).
        Buckets buckets = new Buckets(WINDOW_SECONDS, 3600 / WINDOW_SECONDS, 600 / WINDOW_SECONDS);
        GoldmaneMetrics metrics = new GoldmaneMetrics(new SimpleMeterRegistry());
        FlowStore store = new FlowStore(buckets, 5, buckets.index(clock.millis() / 1000));
        aggregator = new Aggregator(store, clock, 1 << 18, 2048, metrics);
        server = new GoldmaneServer(aggregator, new Requests(buckets, maxPageSize), clock, metrics, null,
                "127.0.0.1", 0, Duration.ofSeconds(10));
        aggregator.start();
        feedChannel = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build();
        feed = FlowCollectorGrpc.newStub(feedChannel).connect(new StreamObserver<>() {
            @Override
            public void onNext(FlowReceipt r) {
                acked.accumulateAndGet(r.getAckSeq(), Math::max);
            }

            @Override
            public void onError(Throwable t) {
                // the feed ends with the test
            }

            @Override
            public void onCompleted() {
            }
        });
    }

    String address() {
        return "127.0.0.1:" + server.port();
    }

    /** Sends flows as node "node-1" and waits until goldmane acknowledged all of them. */
    synchronized void feed(List<Flow> flows) throws InterruptedException {
        for (Flow f : flows) {
            feed.onNext(FlowUpdate.newBuilder().setFlow(f).setSeq(++seq).setNode("node-1").build());
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (acked.get() < seq) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("goldmane acknowledged " + acked.get() + " of " + seq + " flow updates");
            }
            Thread.sleep(2);
        }
    }

    @Override
    public void close() {
        try {
            feed.onCompleted();
        } catch (RuntimeException ignored) {
            // already ended
        }
        feedChannel.shutdownNow();
        server.close();
        aggregator.close();
    }
}
