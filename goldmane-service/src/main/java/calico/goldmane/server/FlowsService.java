package calico.goldmane.server;

import calico.goldmane.engine.Aggregator;
import calico.goldmane.engine.ScanTask;
import calico.goldmane.query.InvalidRequest;
import calico.goldmane.query.Requests;
import calico.libcalico.goldmane.proto.FilterHintsRequest;
import calico.libcalico.goldmane.proto.FilterHintsResult;
import calico.libcalico.goldmane.proto.FlowListRequest;
import calico.libcalico.goldmane.proto.FlowListResult;
import calico.libcalico.goldmane.proto.FlowResult;
import calico.libcalico.goldmane.proto.FlowStreamRequest;
import calico.libcalico.goldmane.proto.FlowsGrpc;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.Timer;
import java.time.Clock;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;

/** Flows: List, FilterHints and Stream, each validated here and run as a scan on the writer. */
final class FlowsService extends FlowsGrpc.FlowsImplBase {

    private final Aggregator aggregator;
    private final Requests requests;
    private final Clock clock;
    private final StreamHub hub;
    private final Timer listLatency;
    private final Timer hintsLatency;
    private final GoldmaneMetrics metrics;

    FlowsService(Aggregator aggregator, Requests requests, Clock clock, StreamHub hub, GoldmaneMetrics metrics) {
        this.aggregator = aggregator;
        this.requests = requests;
        this.clock = clock;
        this.hub = hub;
        this.listLatency = metrics.query("list");
        this.hintsLatency = metrics.query("filter_hints");
        this.metrics = metrics;
    }

    private long now() {
        return clock.millis() / 1000;
    }

    @Override
    public void list(FlowListRequest request, StreamObserver<FlowListResult> out) {
        run(() -> requests.list(request, now()), out, listLatency);
    }

    @Override
    public void filterHints(FilterHintsRequest request, StreamObserver<FilterHintsResult> out) {
        run(() -> requests.hints(request, now()), out, hintsLatency);
    }

    static <T> void run(Supplier<ScanTask<T>> scan, Aggregator aggregator, StreamObserver<T> out, Timer latency,
                        java.util.function.BiConsumer<T, StreamObserver<T>> send) {
        long t0 = System.nanoTime();
        ScanTask<T> task;
        try {
            task = scan.get();
        } catch (InvalidRequest e) {
            out.onError(Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asRuntimeException());
            return;
        }
        aggregator.submit(task).whenComplete((result, err) -> {
            if (err != null) {
                Throwable cause = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
                out.onError(Status.INTERNAL.withDescription(String.valueOf(cause.getMessage())).withCause(cause)
                        .asRuntimeException());
                return;
            }
            try {
                send.accept(result, out);
            } finally {
                latency.record(System.nanoTime() - t0, java.util.concurrent.TimeUnit.NANOSECONDS);
            }
        });
    }

    private <T> void run(Supplier<ScanTask<T>> scan, StreamObserver<T> out, Timer latency) {
        run(scan, aggregator, out, latency, (r, o) -> {
            o.onNext(r);
            o.onCompleted();
        });
    }

    @Override
    public void stream(FlowStreamRequest request, StreamObserver<FlowResult> out) {
        Requests.StreamPlan plan;
        try {
            plan = requests.stream(request, now());
        } catch (InvalidRequest e) {
            out.onError(Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asRuntimeException());
            return;
        }
        var call = (ServerCallStreamObserver<FlowResult>) out;
        StreamHub.Subscriber sub = hub.subscribe(call, plan.filter());
        long t0 = System.nanoTime();
        aggregator.submit(requests.backfill(plan, sub::liveAfter)).whenComplete((flows, err) -> {
            if (err != null) {
                sub.fail(Status.INTERNAL.withDescription("backfill failed: " + err.getMessage()));
                return;
            }
            sub.backfill(flows);
            metrics.backfilled(System.nanoTime() - t0);
        });
    }
}
