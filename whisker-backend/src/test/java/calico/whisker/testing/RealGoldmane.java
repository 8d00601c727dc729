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
import calico.libcalico.testing.Await;
import calico.libcalico.testing.MutableClock;
import io.grpc.ChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.ServerCredentials;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A real goldmane (writer thread, ring, gRPC port on loopback) built from goldmane-service's
 * classes, fed like felix feeds it: FlowUpdates over FlowCollector.Connect. Either on a
 * hand-moved clock ({@link #plaintext()}, {@link #RealGoldmane(ServerCredentials, ChannelCredentials, int)})
 * or on the wall clock with short buckets ({@link #wallClock}), so that buckets close by
 * themselves while a browser watches.
 */
public final class RealGoldmane implements AutoCloseable {

    /** An aligned 15 s bucket start plus one second (2023-11-14T22:13:16Z). */
    public static final long T0 = 1_699_999_995L + 1;

    private final Clock clock;
    public final Buckets buckets;
    private final Aggregator aggregator;
    private final GoldmaneServer server;
    private final ManagedChannel feedChannel;
    private final StreamObserver<FlowUpdate> feed;
    private final AtomicLong acked = new AtomicLong();
    private long seq;

    /** On a hand-moved clock at {@link #T0}: 15 s buckets, 1 h retained, 5 min replay horizon. */
    public RealGoldmane(ServerCredentials tls, ChannelCredentials feedCredentials, int maxPageSize) {
        this(new MutableClock(T0), new Buckets(15, 240, 20), tls, feedCredentials, maxPageSize);
    }

    /**
     * On the wall clock with {@code windowSeconds} buckets, 1 h retained and 10 min accepted
     * back (fixtures may start minutes in the past).
     */
    public static RealGoldmane wallClock(int windowSeconds, int maxPageSize) {
        return new RealGoldmane(Clock.systemUTC(),
                new Buckets(windowSeconds, 3600 / windowSeconds, 600 / windowSeconds), null, null, maxPageSize);
    }

    private RealGoldmane(Clock clock, Buckets buckets, ServerCredentials tls, ChannelCredentials feedCredentials,
                         int maxPageSize) {
        this.clock = clock;
        this.buckets = buckets;
        GoldmaneMetrics metrics = new GoldmaneMetrics(new SimpleMeterRegistry());
        FlowStore store = new FlowStore(buckets, 5, buckets.index(clock.millis() / 1000));
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
        return clock.millis() / 1000;
    }

    /** Sends flows as node "node-1" and waits until goldmane acknowledged all of them. */
    public synchronized void feed(List<Flow> flows) throws InterruptedException {
        for (Flow f : flows) {
            feed.onNext(FlowUpdate.newBuilder().setFlow(f).setSeq(++seq).setNode("node-1").build());
        }
        long want = seq;
        Await.until("goldmane acknowledged all " + want + " flows", Duration.ofSeconds(30), () -> acked.get() >= want);
    }

    /** Moves the clock and waits until the writer opened the bucket it now points at (closing the previous). */
    public void advance(Duration d) throws Exception {
        if (!(clock instanceof MutableClock mutable)) {
            throw new IllegalStateException("a wall-clock goldmane cannot be moved");
        }
        mutable.advance(d);
        int want = buckets.index(mutable.seconds());
        Await.until("the writer rolled over to bucket " + want, Duration.ofSeconds(10), () -> head() == want);
    }

    private int head() {
        try {
            return aggregator.call(FlowStore::head).get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError("the writer did not answer", e);
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
