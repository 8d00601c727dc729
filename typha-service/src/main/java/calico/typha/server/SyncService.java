package calico.typha.server;

import calico.libcalico.typha.SyncerType;
import calico.libcalico.typha.proto.ClientMessage;
import calico.libcalico.typha.proto.ServerMessage;
import calico.libcalico.typha.proto.TyphaGrpc;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.netty.util.internal.ThreadExecutorMap;
import java.time.Duration;
import java.util.Comparator;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntSupplier;

/**
 * The gRPC service: admits streams up to the connection limit and keeps the open ones, which
 * the server's timer pings and rebalances.
 */
final class SyncService extends TyphaGrpc.TyphaImplBase {

    private final Map<SyncerType, SnapshotCache> caches;
    private final ServerSettings settings;
    private final String version;
    private final Map<Long, ClientConnection> connections = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong();
    private final TyphaMetrics metrics;
    /** The rebalancing target; the settings' fixed one unless a live source is set (Kubernetes). */
    private volatile IntSupplier rebalanceTarget;

    SyncService(Map<SyncerType, SnapshotCache> caches, ServerSettings settings, String version,
                TyphaMetrics.Factory metrics) {
        this.caches = caches;
        this.settings = settings;
        this.version = version;
        this.metrics = metrics.create(connections::size);
        this.rebalanceTarget = settings::rebalanceTarget;
        caches.values().forEach(this.metrics::cache);
    }

    @Override
    public StreamObserver<ClientMessage> sync(StreamObserver<ServerMessage> responseObserver) {
        ServerCallStreamObserver<ServerMessage> out = (ServerCallStreamObserver<ServerMessage>) responseObserver;
        if (connections.size() >= settings.maxConnections()) {
            metrics.dropped("max-connections");
            out.onError(Status.RESOURCE_EXHAUSTED.withDescription("too many connections: this typha serves at most "
                    + settings.maxConnections() + " (TYPHA_MAXCONNECTIONSUPPERLIMIT)").asRuntimeException());
            return new Discard();
        }
        ClientConnection c = new ClientConnection(ids.incrementAndGet(), this, out, drainExecutor());
        connections.put(c.id(), c);
        metrics.accepted();
        out.setOnReadyHandler(c::requestDrain);
        out.setOnCancelHandler(() -> c.onError(Status.CANCELLED.asRuntimeException()));
        return c;
    }

    /**
     * The executor for a new stream's drain: the Netty event loop that owns its connection (the
     * server runs handlers directly on it, so this is called there), so that framing and writing
     * a message stay on one thread, with no hand-off per client per message.
     * {@code ThreadExecutorMap} is public but in Netty's internal package: should an upgrade
     * remove it, this fails to compile, and {@code EventLoopDrainTest} checks the threads.
     */
    private static Executor drainExecutor() {
        return Objects.requireNonNull(ThreadExecutorMap.currentExecutor(),
                "a stream starts on its connection's Netty event loop (TyphaServer runs handlers directly)");
    }

    SnapshotCache cache(SyncerType type) {
        return caches.get(type);
    }

    Duration catchUpWait() {
        return settings.catchUpWait();
    }

    String version() {
        return version;
    }

    TyphaMetrics metrics() {
        return metrics;
    }

    void closed(ClientConnection c) {
        connections.remove(c.id());
    }

    int connectionCount() {
        return connections.size();
    }

    /** Pings every client and drops those that stopped answering. */
    void tick() {
        long now = System.nanoTime();
        long timeout = settings.pongTimeout().toNanos();
        for (ClientConnection c : connections.values()) {
            c.tick(now, timeout);
        }
    }

    /** Lets clients whose snapshot waits for this typha to catch up notice the end of the wait. */
    void nudgeWaiting() {
        connections.values().forEach(ClientConnection::nudgeIfAwaitingSnapshot);
    }

    /** Moves one surplus client (the youngest, which has the least invested) when above the target. */
    void rebalanceOnce() {
        int target = rebalanceTarget.getAsInt();
        int n = connections.size();
        if (target <= 0 || n <= target) {
            return;
        }
        connections.values().stream().max(Comparator.comparingLong(ClientConnection::openedNanos))
                .ifPresent(c -> c.rebalance("rebalancing: " + n + " connections here, target " + target));
    }

    void rebalanceTarget(IntSupplier target) {
        this.rebalanceTarget = target;
    }

    /** {@return the service with responses encoded through {@code marshaller} (shared messages once)} */
    io.grpc.ServerServiceDefinition definition(EncodedMessages marshaller) {
        var method = TyphaGrpc.getSyncMethod().toBuilder(
                io.grpc.protobuf.ProtoUtils.marshaller(ClientMessage.getDefaultInstance()), marshaller).build();
        return io.grpc.ServerServiceDefinition.builder(TyphaGrpc.SERVICE_NAME)
                .addMethod(method, io.grpc.stub.ServerCalls.asyncBidiStreamingCall(this::sync))
                .build();
    }

    /** Ends every stream (shutdown). */
    void closeAll(Status status) {
        connections.values().forEach(c -> c.fail(status, "shutdown"));
    }

    /** Accepts and ignores the messages of a refused stream. */
    private static final class Discard implements StreamObserver<ClientMessage> {
        @Override
        public void onNext(ClientMessage value) {
        }

        @Override
        public void onError(Throwable t) {
        }

        @Override
        public void onCompleted() {
        }
    }
}
