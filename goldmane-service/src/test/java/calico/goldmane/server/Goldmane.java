package calico.goldmane.server;

import calico.goldmane.engine.Aggregator;
import calico.goldmane.persist.SnapshotStore;
import calico.goldmane.query.Requests;
import calico.goldmane.store.Buckets;
import calico.goldmane.store.FlowStore;
import calico.libcalico.goldmane.proto.Flow;
import calico.libcalico.goldmane.proto.FlowCollectorGrpc;
import calico.libcalico.goldmane.proto.FlowsGrpc;
import calico.libcalico.goldmane.proto.StatisticsGrpc;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.MutableClock;
import io.grpc.ChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.ServerCredentials;
import io.grpc.netty.NettyChannelBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A real goldmane on loopback (writer, gRPC port, optional snapshots) with a hand-moved clock. */
final class Goldmane implements AutoCloseable {

    /** An aligned bucket start plus one second. */
    static final long T0 = 1_699_999_995L + 1;

    final MutableClock clock;
    final Buckets buckets;
    final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    final GoldmaneMetrics metrics = new GoldmaneMetrics(meters);
    final Aggregator aggregator;
    final GoldmaneServer server;
    final SnapshotStore snapshots;
    private final List<ManagedChannel> channels = new ArrayList<>();

    Goldmane(MutableClock clock, Buckets buckets, Path snapshotDir, ServerCredentials tls) {
        this.clock = clock;
        this.buckets = buckets;
        FlowStore store = new FlowStore(buckets, 5, buckets.index(clock.seconds()));
        if (snapshotDir != null) {
            snapshots = new SnapshotStore(snapshotDir, buckets.widthSeconds(), buckets.retained(), (a, b) -> { });
            snapshots.load(buckets.start(buckets.oldestRetained(store.head()))).forEach(store::restore);
        } else {
            snapshots = null;
        }
        aggregator = new Aggregator(store, clock, 65536, 512, metrics);
        if (snapshots != null) {
            aggregator.addListener(snapshots);
        }
        server = new GoldmaneServer(aggregator, new Requests(buckets, 1000), clock, metrics, tls, "127.0.0.1", 0,
                Duration.ofSeconds(5));
        aggregator.start();
    }

    static Goldmane start() {
        return new Goldmane(new MutableClock(T0), new Buckets(15, 240, 20), null, null);
    }

    ManagedChannel channel() {
        return channel(null);
    }

    ManagedChannel channel(ChannelCredentials creds) {
        var b = creds == null ? NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext()
                : NettyChannelBuilder.forAddress("127.0.0.1", server.port(), creds).overrideAuthority("localhost");
        ManagedChannel c = b.maxInboundMessageSize(64 << 20).build();
        channels.add(c);
        return c;
    }

    FlowsGrpc.FlowsBlockingStub flows() {
        return FlowsGrpc.newBlockingStub(channel()).withDeadlineAfter(30, TimeUnit.SECONDS);
    }

    StatisticsGrpc.StatisticsBlockingStub statistics() {
        return StatisticsGrpc.newBlockingStub(channel()).withDeadlineAfter(30, TimeUnit.SECONDS);
    }

    FlowCollectorGrpc.FlowCollectorStub collector() {
        return FlowCollectorGrpc.newStub(channel());
    }

    /** Counts flows directly (no node: no de-duplication) and waits until they are in the ring. */
    void ingest(Flow.Builder... flows) throws Exception {
        for (Flow.Builder f : flows) {
            aggregator.ingest(f.build(), null, null, 0, 5000);
        }
        aggregator.flush().get(10, TimeUnit.SECONDS);
    }

    /** Moves the clock and waits for the writer to open the bucket it now points at. */
    void advance(Duration d) {
        clock.advance(d);
        int want = buckets.index(clock.seconds());
        Await.until("the writer rolled over to bucket " + want, Duration.ofSeconds(10), () -> head() == want);
    }

    private int head() {
        try {
            return aggregator.call(FlowStore::head).get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError("the writer did not answer", e);
        }
    }

    /**
     * Waits until {@code n} streams in all have had their backfill sent: from then on each takes
     * every window that closes (the backfill's scan fixed where live windows start).
     */
    void awaitStreamsLive(int n) {
        Await.until(n + " streams live", Duration.ofSeconds(30),
                () -> meters.get("goldmane_query_latency").tag("method", "stream_backfill").timer().count() >= n);
    }

    long now() {
        return clock.seconds();
    }

    @Override
    public void close() {
        channels.forEach(ManagedChannel::shutdownNow);
        server.close();
        aggregator.close();
        if (snapshots != null) {
            snapshots.close();
        }
    }
}
