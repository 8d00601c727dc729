package calico.whisker.testing;

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
import io.grpc.ChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.ServerCredentials;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A real goldmane (writer thread, ring, gRPC port on loopback) built from goldmane-service's
 * classes, with a hand-moved clock, fed like felix feeds it: FlowUpdates over FlowCollector.Connect.
 */
public final class RealGoldmane implements AutoCloseable {

    /** An aligned 15 s bucket start plus one second (2023-11-14T22:13:16Z). */
    public static final long T0 = 1_699_999_995L + 1;

    public final MutableClock clock;
    public final Buckets buckets;
    private final Aggregator aggregator;
    private final GoldmaneServer server;
    private final ManagedChannel feedChannel;
    private final StreamObserver<FlowUpdate> feed;
    private final AtomicLong acked = new AtomicLong();
    private long seq;

    public RealGoldmane(ServerCredentials tls, ChannelCredentials feedCredentials, int maxPageSize) {
        clock = new MutableClock(T0);
        buckets = new Buckets(15, 240, 20);
        GoldmaneMetrics metrics = new GoldmaneMetrics(new SimpleMeterRegistry());
        FlowStore store = new FlowStore(buckets, 5, buckets.index(clock.seconds()));
        aggregator = new Aggregator(store, clock, 1 << 18, 2048, metrics);
        server = new GoldmaneServer(aggregator, new Requests(buckets, maxPageSize), clock, metrics, tls,
                "127.0.0.1", 0, Duration.ofSeconds(10));
        aggregator.start();
        var b = feedCredentials == null ? NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext()
                : NettyChannelBuilder.forAddress("127.0.0.1", server.port(), feedCredentials)
                .overrideAuthority("localhost");
        feedChannel = b.build();
        feed = FlowCollectorGrpc.newStub(feedChannel).connect(new StreamObserver<>() {
            @Override
            public void onNext(FlowReceipt r) {
                acked.accumulateAndGet(r.getAckSeq(), Math::max);
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onCompleted() {
            }
        });
    }

    public static RealGoldmane plaintext() {
        return new RealGoldmane(null, null, 1000);
    }

    public int port() {
        return server.port();
    }

    public String address() {
        return "127.0.0.1:" + port();
    }

    /** {@return open Flows.Stream subscriptions on the server} */
    public int streams() {
        return server.streams();
    }

    public long now() {
        return clock.seconds();
    }

    /** Sends flows as node "node-1" and waits until goldmane acknowledged all of them. */
    public synchronized void feed(List<Flow> flows) throws InterruptedException {
        for (Flow f : flows) {
            feed.onNext(FlowUpdate.newBuilder().setFlow(f).setSeq(++seq).setNode("node-1").build());
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (acked.get() < seq) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("goldmane acknowledged " + acked.get() + " of " + seq);
            }
            Thread.sleep(2);
        }
    }

    /** Moves the clock and waits until the writer opened the bucket it now points at (closing the previous). */
    public void advance(Duration d) throws Exception {
        clock.advance(d);
        int want = buckets.index(clock.seconds());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (aggregator.call(FlowStore::head).get(10, TimeUnit.SECONDS) != want) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("writer did not roll over to " + want);
            }
            Thread.sleep(5);
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
