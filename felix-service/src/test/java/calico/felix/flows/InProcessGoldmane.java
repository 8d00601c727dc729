package calico.felix.flows;

import calico.goldmane.engine.Aggregator;
import calico.goldmane.persist.SnapshotStore;
import calico.goldmane.query.Requests;
import calico.goldmane.server.GoldmaneMetrics;
import calico.goldmane.server.GoldmaneServer;
import calico.goldmane.server.GoldmaneTls;
import calico.goldmane.store.Buckets;
import calico.goldmane.store.FlowStore;
import calico.goldmane.store.Window;
import calico.libcalico.goldmane.proto.FlowListRequest;
import calico.libcalico.goldmane.proto.FlowListResult;
import calico.libcalico.goldmane.proto.FlowsGrpc;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.TestCertificates;
import io.grpc.ChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.ServerCredentials;
import io.grpc.TlsChannelCredentials;
import io.grpc.netty.NettyChannelBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A real goldmane (goldmane-service's writer, store, snapshots and gRPC server, wired as its
 * daemon wires them) on loopback, on a given port so a restarted one is found at the same
 * address. With a snapshot directory a stop saves the open bucket, as the daemon's stop does.
 */
public final class InProcessGoldmane implements AutoCloseable {

    /** Goldmane's defaults: 15 s buckets, an hour retained, a 5 min replay horizon. */
    static final Buckets BUCKETS = new Buckets(15, 240, 20);

    private final Buckets buckets;

    final GoldmaneMetrics metrics = new GoldmaneMetrics(new SimpleMeterRegistry());
    private final Aggregator aggregator;
    private final GoldmaneServer server;
    private final SnapshotStore snapshots;
    private final ManagedChannel channel;

    public InProcessGoldmane(int port, Path snapshotDir) {
        this(port, snapshotDir, null);
    }

    /** @param tls null for plaintext; else goldmane asks for a client certificate from its CA, as with files in production */
    public InProcessGoldmane(int port, Path snapshotDir, TestCertificates tls) {
        this(port, snapshotDir, tls, BUCKETS);
    }

    /** @param buckets the bucket width ({@code AGGREGATION_WINDOW}), retention and replay horizon */
    public InProcessGoldmane(int port, Path snapshotDir, TestCertificates tls, Buckets buckets) {
        this.buckets = buckets;
        Clock clock = Clock.systemUTC();
        int head = buckets.index(clock.millis() / 1000);
        FlowStore store = new FlowStore(buckets, 100, head);
        if (snapshotDir != null) {
            snapshots = new SnapshotStore(snapshotDir, buckets.widthSeconds(), buckets.retained(), (a, b) -> { });
            snapshots.load(buckets.start(buckets.oldestRetained(head))).forEach(store::restore);
        } else {
            snapshots = null;
        }
        aggregator = new Aggregator(store, clock, 65536, 512, metrics);
        if (snapshots != null) {
            aggregator.addListener(snapshots);
        }
        server = bind(port, clock, tls == null ? null : GoldmaneTls.serverCredentials(tls.serverCert().toString(),
                tls.serverKey().toString(), tls.caCert().toString()));
        aggregator.start();
        channel = tls == null ? NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build()
                : NettyChannelBuilder.forAddress("127.0.0.1", server.port(), clientCredentials(tls)).build();
    }

    private static ChannelCredentials clientCredentials(TestCertificates tls) {
        try {
            return TlsChannelCredentials.newBuilder().trustManager(tls.caCert().toFile())
                    .keyManager(tls.clientCert().toFile(), tls.clientKey().toFile()).build();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** A port just freed may be in use a little longer: retry for a while. */
    private GoldmaneServer bind(int port, Clock clock, ServerCredentials credentials) {
        RuntimeException[] last = {null};
        try {
            return Await.value("goldmane bound to 127.0.0.1:" + port, Duration.ofSeconds(30), () -> {
                try {
                    return Optional.of(new GoldmaneServer(aggregator, new Requests(buckets, 1000), clock, metrics,
                            credentials, "127.0.0.1", port, Duration.ofSeconds(5)));
                } catch (RuntimeException e) {
                    last[0] = e;
                    return Optional.empty();
                }
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; last failure: " + last[0], last[0]);
        }
    }

    public int port() {
        return server.port();
    }

    public String target() {
        return "127.0.0.1:" + port();
    }

    /** Every flow of the retained range, one result per key. */
    public FlowListResult list() throws Exception {
        return list(FlowListRequest.newBuilder().build());
    }

    /** The answer to {@code request}, once every report received so far is in the store. */
    public FlowListResult list(FlowListRequest request) throws Exception {
        aggregator.flush().get(10, TimeUnit.SECONDS);
        return FlowsGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS).list(request);
    }

    @Override
    public void close() {
        channel.shutdownNow();
        server.close();
        if (snapshots != null) {
            try {
                List<Window> unsaved = aggregator.call(FlowStore::unsaved).get(10, TimeUnit.SECONDS);
                snapshots.close();
                unsaved.forEach(snapshots::writeNow);
            } catch (Exception e) {
                throw new IllegalStateException("could not save the open bucket", e);
            }
        }
        aggregator.close();
    }
}
