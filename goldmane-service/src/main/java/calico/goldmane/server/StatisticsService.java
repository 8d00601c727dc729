package calico.goldmane.server;

import calico.goldmane.engine.Aggregator;
import calico.goldmane.query.Requests;
import calico.libcalico.goldmane.proto.StatisticsGrpc;
import calico.libcalico.goldmane.proto.StatisticsRequest;
import calico.libcalico.goldmane.proto.StatisticsResult;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.Timer;
import java.time.Clock;
import java.util.List;

/** Statistics.List: per policy or rule, streamed one result per group. */
final class StatisticsService extends StatisticsGrpc.StatisticsImplBase {

    private final Aggregator aggregator;
    private final Requests requests;
    private final Clock clock;
    private final Timer latency;

    StatisticsService(Aggregator aggregator, Requests requests, Clock clock, GoldmaneMetrics metrics) {
        this.aggregator = aggregator;
        this.requests = requests;
        this.clock = clock;
        this.latency = metrics.query("statistics");
    }

    @Override
    public void list(StatisticsRequest request, StreamObserver<StatisticsResult> out) {
        StreamObserver<List<StatisticsResult>> adapter = new StreamObserver<>() {
            @Override
            public void onNext(List<StatisticsResult> value) {
                value.forEach(out::onNext);
            }

            @Override
            public void onError(Throwable t) {
                out.onError(t);
            }

            @Override
            public void onCompleted() {
                out.onCompleted();
            }
        };
        FlowsService.run(() -> requests.statistics(request, clock.millis() / 1000), aggregator, adapter, latency,
                (r, o) -> {
                    o.onNext(r);
                    o.onCompleted();
                });
    }
}
