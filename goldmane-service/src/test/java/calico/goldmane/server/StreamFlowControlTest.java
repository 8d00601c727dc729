package calico.goldmane.server;

import static calico.goldmane.server.TestFlows.flow;
import static calico.goldmane.server.TestFlows.key;
import static org.assertj.core.api.Assertions.assertThat;

import calico.libcalico.goldmane.proto.Action;
import calico.libcalico.goldmane.proto.Flow;
import calico.libcalico.goldmane.proto.FlowResult;
import calico.libcalico.goldmane.proto.FlowStreamRequest;
import calico.libcalico.goldmane.proto.FlowsGrpc;
import calico.libcalico.testing.Await;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Stream over a real loopback server with gRPC flow control: a client that stops reading is
 * buffered up to {@link StreamHub#MAX_PENDING_WINDOWS} closed windows, then ended with
 * RESOURCE_EXHAUSTED naming the bound, while a reading client gets every window.
 */
class StreamFlowControlTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    /** Flows per window: ~40 KB of results, so the small transport window below fills in two. */
    private static final int KEYS = 200;
    /** The client's HTTP/2 window (no auto-tuning): what the server can send before it must wait. */
    private static final int CLIENT_WINDOW = 64 * 1024;

    private Goldmane gm;
    private ManagedChannel slowChannel;

    @BeforeEach
    void start() {
        gm = Goldmane.start();
        slowChannel = NettyChannelBuilder.forAddress("127.0.0.1", gm.server.port()).usePlaintext()
                .flowControlWindow(CLIENT_WINDOW).build();
    }

    @AfterEach
    void stop() throws InterruptedException {
        slowChannel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        gm.close();
    }

    /** Reads every result as it comes (gRPC asks for more by itself). */
    private static class Reader implements StreamObserver<FlowResult> {
        final AtomicInteger received = new AtomicInteger();
        final CompletableFuture<Status> end = new CompletableFuture<>();

        @Override
        public void onNext(FlowResult r) {
            received.incrementAndGet();
        }

        @Override
        public void onError(Throwable t) {
            end.complete(Status.fromThrowable(t));
        }

        @Override
        public void onCompleted() {
            end.complete(Status.OK);
        }
    }

    /** Reads nothing until told to: messages wait in gRPC and HTTP/2 windows, then on the server. */
    private static final class NonReader extends Reader
            implements ClientResponseObserver<FlowStreamRequest, FlowResult> {
        final AtomicReference<ClientCallStreamObserver<FlowStreamRequest>> call = new AtomicReference<>();

        @Override
        public void beforeStart(ClientCallStreamObserver<FlowStreamRequest> c) {
            c.disableAutoRequestWithInitial(0);
            call.set(c);
        }
    }

    /** Closes one window of {@link #KEYS} flows. */
    private void closeWindow() throws Exception {
        long t = gm.now();
        var flows = new Flow.Builder[KEYS];
        for (int i = 0; i < KEYS; i++) {
            flows[i] = flow(key("ns", "src-" + i + "-", "dst", "server-", 8000 + i, Action.Allow),
                    t, t + 10, 1, 100);
        }
        gm.ingest(flows);
        gm.advance(Duration.ofSeconds(15));
    }

    @Test
    void aSlowStreamIsBufferedUpToTheBoundThenEndedWhileAFastOneGetsEverything() throws Exception {
        FlowStreamRequest liveOnly = FlowStreamRequest.getDefaultInstance();
        NonReader slow = new NonReader();
        Reader fast = new Reader();
        Context.CancellableContext ctx = Context.current().withCancellation();
        ctx.run(() -> {
            FlowsGrpc.newStub(slowChannel).stream(liveOnly, slow);
            FlowsGrpc.newStub(gm.channel()).stream(liveOnly, fast);
        });
        try {
            gm.awaitStreamsLive(2);

            int windows = 0;
            while (gm.server.streams() == 2) {
                assertThat(windows).as("windows closed before the slow stream was ended")
                        .isLessThan(StreamHub.MAX_PENDING_WINDOWS + 20);
                closeWindow();
                windows++;
                // Each window is fanned out before the next one closes, so the bound is met at
                // a known window: wait until the reading client has it.
                int want = windows * KEYS;
                Await.until("the reading stream has window " + windows, WAIT, () -> fast.received.get() >= want);
            }
            // The slow stream held more than the bound in total (transport windows plus queue),
            // but never more than the bound in its queue.
            assertThat(windows).isGreaterThan(StreamHub.MAX_PENDING_WINDOWS);
            assertThat(gm.server.pendingWindowsHighWater()).isEqualTo(StreamHub.MAX_PENDING_WINDOWS);
            assertThat(gm.meters.get("goldmane_num_streams").gauge().value()).isEqualTo(1);

            // The reading stream is unaffected and keeps going.
            closeWindow();
            windows++;
            int all = windows * KEYS;
            Await.until("the reading stream has every window", WAIT, () -> fast.received.get() >= all);
            assertThat(fast.received.get()).isEqualTo(all);
            assertThat(fast.end).isNotDone();

            // The slow client sees the status once it reads what was already on its way.
            assertThat(slow.end).isNotDone();
            slow.call.get().request(Integer.MAX_VALUE);
            Status status = slow.end.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(status.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
            assertThat(status.getDescription()).contains("stream fell behind")
                    .contains(StreamHub.MAX_PENDING_WINDOWS + " closed windows");
            assertThat(slow.received.get()).isPositive().isLessThan(all);
        } finally {
            ctx.cancel(null);
        }
    }
}
