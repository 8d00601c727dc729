package calico.goldmane.server;

import calico.libcalico.goldmane.proto.Flow;
import calico.libcalico.goldmane.proto.FlowCollectorGrpc;
import calico.libcalico.goldmane.proto.FlowReceipt;
import calico.libcalico.goldmane.proto.FlowUpdate;
import calico.libcalico.testing.Await;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/** The felix side of the collector contract, as small as a test needs: one stream, seq from 1. */
final class FelixClient implements AutoCloseable {

    private final StreamObserver<FlowUpdate> out;
    private final AtomicLong acked = new AtomicLong();
    final CompletableFuture<io.grpc.Status> ended = new CompletableFuture<>();
    private final String node;
    private long seq;

    FelixClient(FlowCollectorGrpc.FlowCollectorStub stub, String node) {
        this.node = node;
        this.out = stub.connect(new StreamObserver<>() {
            @Override
            public void onNext(FlowReceipt r) {
                acked.accumulateAndGet(r.getAckSeq(), Math::max);
            }

            @Override
            public void onError(Throwable t) {
                ended.complete(io.grpc.Status.fromThrowable(t));
            }

            @Override
            public void onCompleted() {
                ended.complete(io.grpc.Status.OK);
            }
        });
    }

    /** Sends the flows and waits until all are acknowledged. */
    void sendAndAwaitAcks(List<Flow> flows) {
        for (Flow f : flows) {
            out.onNext(FlowUpdate.newBuilder().setFlow(f).setSeq(++seq).setNode(node).build());
        }
        long want = seq;
        Await.until("acks up to " + want, Duration.ofSeconds(20), () -> acked.get() >= want);
    }

    void sendRaw(FlowUpdate u) {
        out.onNext(u);
    }

    long acked() {
        return acked.get();
    }

    @Override
    public void close() {
        try {
            out.onCompleted();
        } catch (RuntimeException ignored) {
            // already ended
        }
    }
}
