package calico.goldmane.server;

import calico.goldmane.engine.AckSink;
import calico.goldmane.engine.Aggregator;
import calico.libcalico.goldmane.proto.FlowCollectorGrpc;
import calico.libcalico.goldmane.proto.FlowReceipt;
import calico.libcalico.goldmane.proto.FlowUpdate;
import io.grpc.Grpc;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;

/**
 * FlowCollector.Connect: each update goes onto the writer's queue; the writer acknowledges
 * cumulatively once per batch. A full queue holds the stream's thread (so gRPC flow control
 * pushes back on felix) up to {@code ingestTimeout}; after that the stream is ended with
 * RESOURCE_EXHAUSTED and felix reconnects and replays: nothing lost, nothing counted twice.
 */
final class CollectorService extends FlowCollectorGrpc.FlowCollectorImplBase {

    private final Aggregator aggregator;
    private final GoldmaneMetrics metrics;
    private final long ingestTimeoutMillis;

    CollectorService(Aggregator aggregator, GoldmaneMetrics metrics, Duration ingestTimeout) {
        this.aggregator = aggregator;
        this.metrics = metrics;
        this.ingestTimeoutMillis = ingestTimeout.toMillis();
    }

    private static final class Session implements AckSink {
        private final ServerCallStreamObserver<FlowReceipt> out;
        private boolean done;

        Session(ServerCallStreamObserver<FlowReceipt> out) {
            this.out = out;
        }

        @Override
        public synchronized void ack(long seq) {
            if (!done && !out.isCancelled()) {
                try {
                    out.onNext(FlowReceipt.newBuilder().setAckSeq(seq).build());
                } catch (RuntimeException e) {
                    done = true;
                }
            }
        }

        synchronized void end(Status s) {
            if (!done) {
                done = true;
                try {
                    if (s.isOk()) {
                        out.onCompleted();
                    } else {
                        out.onError(s.asRuntimeException());
                    }
                } catch (RuntimeException ignored) {
                    // cancelled meanwhile
                }
            }
        }
    }

    @Override
    public StreamObserver<FlowUpdate> connect(StreamObserver<FlowReceipt> responses) {
        var call = (ServerCallStreamObserver<FlowReceipt>) responses;
        Session session = new Session(call);
        String peer = peerHost(io.grpc.Context.current());
        metrics.clients().incrementAndGet();
        return new StreamObserver<>() {
            private boolean ended;
            private long lastSeq = Long.MIN_VALUE;

            @Override
            public void onNext(FlowUpdate u) {
                if (ended) {
                    return;
                }
                if (u.getSeq() <= lastSeq) {
                    endWith(Status.INVALID_ARGUMENT.withDescription("seq: " + u.getSeq()
                            + " is not greater than the previous " + lastSeq));
                    return;
                }
                lastSeq = u.getSeq();
                String node = u.getNode().isEmpty() ? peer : u.getNode();
                try {
                    if (!aggregator.ingest(u.getFlow(), node, session, u.getSeq(), ingestTimeoutMillis)) {
                        metrics.queueFull(1);
                        endWith(Status.RESOURCE_EXHAUSTED.withDescription(
                                "ingest queue full; reconnect and replay"));
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    endWith(Status.UNAVAILABLE.withDescription("interrupted"));
                }
            }

            private void endWith(Status s) {
                ended = true;
                session.end(s);
            }

            @Override
            public void onError(Throwable t) {
                gone();
            }

            @Override
            public void onCompleted() {
                gone();
                // Acks for what is queued follow; completing after a flush keeps them on the wire.
                aggregator.flush().whenComplete((v, e) -> session.end(Status.OK));
            }

            private boolean counted = true;

            private void gone() {
                if (counted) {
                    counted = false;
                    metrics.clients().decrementAndGet();
                }
            }
        };
    }

    private static final io.grpc.Context.Key<SocketAddress> PEER = io.grpc.Context.key("goldmane-peer");

    static io.grpc.ServerInterceptor peerInterceptor() {
        return new io.grpc.ServerInterceptor() {
            @Override
            public <Q, R> io.grpc.ServerCall.Listener<Q> interceptCall(io.grpc.ServerCall<Q, R> call,
                    io.grpc.Metadata headers, io.grpc.ServerCallHandler<Q, R> next) {
                io.grpc.Context ctx = io.grpc.Context.current().withValue(PEER,
                        call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
                return io.grpc.Contexts.interceptCall(ctx, call, headers, next);
            }
        };
    }

    private static String peerHost(io.grpc.Context ctx) {
        SocketAddress a = PEER.get(ctx);
        if (a instanceof InetSocketAddress i) {
            return i.getAddress() != null ? i.getAddress().getHostAddress() : i.getHostString();
        }
        return String.valueOf(a);
    }
}
