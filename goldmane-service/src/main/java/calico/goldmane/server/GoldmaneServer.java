package calico.goldmane.server;

import calico.goldmane.engine.Aggregator;
import calico.goldmane.query.Requests;
import io.grpc.Server;
import io.grpc.ServerCredentials;
import io.grpc.ServerInterceptors;
import io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The one gRPC port: FlowCollector, Flows and Statistics over the aggregator. */
public final class GoldmaneServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(GoldmaneServer.class);

    private final Server server;
    private final StreamHub hub;

    /**
     * @param credentials TLS ({@link GoldmaneTls}) or null for plaintext
     * @param host        listen address; empty for all
     */
    public GoldmaneServer(Aggregator aggregator, Requests requests, Clock clock, GoldmaneMetrics metrics,
                          ServerCredentials credentials, String host, int port, Duration ingestTimeout) {
        this.hub = new StreamHub(metrics);
        aggregator.addListener(hub);
        InetSocketAddress at = host == null || host.isEmpty() ? new InetSocketAddress(port)
                : new InetSocketAddress(host, port);
        NettyServerBuilder b = credentials == null ? NettyServerBuilder.forAddress(at)
                : NettyServerBuilder.forAddress(at, credentials);
        this.server = b
                .addService(ServerInterceptors.intercept(new CollectorService(aggregator, metrics, ingestTimeout),
                        CollectorService.peerInterceptor()))
                .addService(new FlowsService(aggregator, requests, clock, hub, metrics))
                .addService(new StatisticsService(aggregator, requests, clock, metrics))
                .build();
        try {
            server.start();
        } catch (IOException e) {
            throw new UncheckedIOException("goldmane: cannot listen on " + at + " (PORT)", e);
        }
        log.info("goldmane listening on {} ({})", server.getPort(), credentials == null ? "plaintext" : "TLS");
    }

    public int port() {
        return server.getPort();
    }

    /** {@return open Flows.Stream subscriptions} */
    public int streams() {
        return hub.size();
    }

    /** {@return the most closed windows any stream has had waiting for its client} (at most {@link StreamHub#MAX_PENDING_WINDOWS}) */
    int pendingWindowsHighWater() {
        return hub.highWater();
    }

    @Override
    public void close() {
        hub.close();
        server.shutdown();
        try {
            if (!server.awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS)) {
                server.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            server.shutdownNow();
        }
    }
}
