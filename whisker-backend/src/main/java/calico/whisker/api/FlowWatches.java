package calico.whisker.api;

import calico.libcalico.goldmane.proto.FlowResult;
import calico.libcalico.goldmane.proto.FlowStreamRequest;
import calico.whisker.api.Responses.FlowResponse;
import calico.whisker.goldmane.GoldmaneClient;
import calico.whisker.goldmane.GoldmaneException;
import calico.whisker.web.ErrorBody;
import calico.whisker.web.Json;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;

/**
 * Live mode: one goldmane Flows.Stream per SSE client, relayed result by result.
 *
 * <p>Never buffers: the gRPC call runs with manual flow control, one result requested at a time,
 * and the next is requested only after the previous event was written to the client (a blocking
 * servlet write), so a slow client slows its own goldmane stream instead of filling memory.
 * A client that went away is noticed at the next write (an event or the keep-alive comment)
 * and its gRPC call is cancelled; goldmane ending the stream ends the response with an
 * {@code error} event.
 */
public final class FlowWatches implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(FlowWatches.class);

    private final GoldmaneClient goldmane;
    private final Duration keepAlive;
    private final ScheduledExecutorService timer;
    private final AtomicInteger open = new AtomicInteger();

    public FlowWatches(GoldmaneClient goldmane, Duration keepAlive, MeterRegistry meters) {
        this.goldmane = goldmane;
        this.keepAlive = keepAlive;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "whisker-sse-keepalive");
            t.setDaemon(true);
            return t;
        });
        Gauge.builder("whisker_watches", open, AtomicInteger::get).description("open GET /flows?watch=true streams")
                .register(meters);
    }

    /** {@return open live streams} */
    public int open() {
        return open.get();
    }

    SseEmitter open(FlowStreamRequest request) {
        SseEmitter emitter = new SseEmitter(0L);
        Watch w = new Watch(emitter);
        emitter.onCompletion(() -> w.cancel("client gone"));
        emitter.onTimeout(() -> w.cancel("timed out"));
        emitter.onError(t -> w.cancel("client error"));
        open.incrementAndGet();
        // The first comment commits the headers at once, so the client sees 200 before any flow.
        w.comment();
        w.keepAlive = timer.scheduleAtFixedRate(w::comment, keepAlive.toMillis(), keepAlive.toMillis(),
                TimeUnit.MILLISECONDS);
        goldmane.stream(request, w);
        return emitter;
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }

    private final class Watch implements ClientResponseObserver<FlowStreamRequest, FlowResult> {

        private final SseEmitter emitter;
        private final AtomicBoolean done = new AtomicBoolean();
        private volatile ClientCallStreamObserver<FlowStreamRequest> call;
        private volatile ScheduledFuture<?> keepAlive;

        Watch(SseEmitter emitter) {
            this.emitter = emitter;
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<FlowStreamRequest> c) {
            this.call = c;
            c.disableAutoRequestWithInitial(1);
        }

        @Override
        public void onNext(FlowResult r) {
            goldmane.markAnswered();
            try {
                emitter.send(SseEmitter.event().id(Long.toString(r.getId())).data(Json.write(FlowResponse.of(r))));
            } catch (IOException | IllegalStateException e) {
                cancel("client gone: " + e.getMessage());
                return;
            }
            call.request(1);
        }

        @Override
        public void onError(Throwable t) {
            if (!finish()) {
                return; // we cancelled it
            }
            GoldmaneException g = goldmane.failure(t);
            ErrorBody body = ErrorBody.of(ApiErrors.status(g), g.getMessage(), null);
            try {
                emitter.send(SseEmitter.event().name("error").data(Json.write(body)));
                emitter.complete();
            } catch (IOException | IllegalStateException e) {
                log.debug("watch: client already gone", e);
            }
        }

        @Override
        public void onCompleted() {
            if (finish()) {
                emitter.complete();
            }
        }

        void comment() {
            if (done.get()) {
                return;
            }
            try {
                emitter.send(SseEmitter.event().comment(" keep-alive"));
            } catch (IOException | IllegalStateException e) {
                cancel("client gone: " + e.getMessage());
            }
        }

        /** Cancels the gRPC call when the client went away; idempotent. */
        void cancel(String why) {
            if (!finish()) {
                return;
            }
            ClientCallStreamObserver<FlowStreamRequest> c = call;
            if (c != null) {
                c.cancel(why, null);
            }
            try {
                emitter.complete();
            } catch (RuntimeException e) {
                log.debug("watch: completing after {}", why, e);
            }
        }

        /** {@return true for the first caller only}; releases the keep-alive and the gauge. */
        private boolean finish() {
            if (!done.compareAndSet(false, true)) {
                return false;
            }
            open.decrementAndGet();
            ScheduledFuture<?> k = keepAlive;
            if (k != null) {
                k.cancel(false);
            }
            return true;
        }
    }
}
