package calico.whisker.goldmane;

import calico.libcalico.goldmane.proto.FilterHintsRequest;
import calico.libcalico.goldmane.proto.FilterHintsResult;
import calico.libcalico.goldmane.proto.FilterType;
import calico.libcalico.goldmane.proto.FlowListRequest;
import calico.libcalico.goldmane.proto.FlowListResult;
import calico.libcalico.goldmane.proto.FlowResult;
import calico.libcalico.goldmane.proto.FlowStreamRequest;
import calico.libcalico.goldmane.proto.FlowsGrpc;
import calico.libcalico.goldmane.proto.StatisticsGrpc;
import calico.libcalico.goldmane.proto.StatisticsRequest;
import calico.libcalico.goldmane.proto.StatisticsResult;
import calico.libcalico.health.HealthAggregator;
import calico.libcalico.health.HealthReporter;
import calico.proto.tls.PemKey;
import io.grpc.ChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.AbstractStub;
import io.grpc.stub.ClientResponseObserver;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one channel to goldmane (plaintext or mutual TLS) and the calls the API makes. Stateless
 * apart from the channel: every HTTP request is one goldmane call. Readiness turns true once
 * goldmane has answered a call (any answer, errors included, proves it is there); until then a
 * small probe asks every {@code probeInterval} so that an idle backend becomes ready too.
 */
public final class GoldmaneClient implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(GoldmaneClient.class);

    private final String target;
    private final ManagedChannel channel;
    private final Duration timeout;
    private final HealthReporter readiness;
    private final AtomicBoolean answered = new AtomicBoolean();
    private final ScheduledExecutorService prober;

    /**
     * How to reach goldmane, as the application's settings give it (checked there).
     *
     * @param target        host:port
     * @param callTimeout   deadline of one unary call
     * @param probeInterval how often goldmane is asked until it first answers (readiness)
     * @param caCertPath    CA of goldmane's certificate; null for plaintext (then the other two are null too)
     * @param tlsCertPath   our client certificate
     * @param tlsKeyPath    its key, PEM PKCS#8
     */
    public record Connection(String target, Duration callTimeout, Duration probeInterval, String caCertPath,
                             String tlsCertPath, String tlsKeyPath) {

        boolean tls() {
            return caCertPath != null;
        }
    }

    public GoldmaneClient(Connection p, HealthAggregator health) {
        this.target = p.target();
        this.timeout = p.callTimeout();
        NettyChannelBuilder b = p.tls() ? NettyChannelBuilder.forTarget(target, credentials(p))
                : NettyChannelBuilder.forTarget(target).usePlaintext();
        this.channel = b.maxInboundMessageSize(64 << 20).build();
        this.readiness = health.registerReporter("goldmane-client", false, true, Duration.ZERO);
        readiness.report(false, false, "goldmane has not answered yet");
        this.prober = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "whisker-goldmane-probe");
            t.setDaemon(true);
            return t;
        });
        prober.scheduleWithFixedDelay(this::probe, 0, p.probeInterval().toMillis(), TimeUnit.MILLISECONDS);
        log.info("goldmane at {} ({})", target, p.tls() ? "mutual TLS" : "plaintext");
    }

    private static ChannelCredentials credentials(Connection p) {
        try {
            return TlsChannelCredentials.newBuilder().trustManager(new File(p.caCertPath()))
                    .keyManager(Files.newInputStream(Path.of(p.tlsCertPath())), PemKey.pkcs8(Path.of(p.tlsKeyPath())))
                    .build(); // PemKey: PKCS#1 (Helm's, Go's tools') or PKCS#8
        } catch (IOException | IllegalArgumentException e) {
            throw new IllegalArgumentException("CA_CERT_PATH, TLS_CERT_PATH, TLS_KEY_PATH: cannot load: "
                    + e.getMessage(), e);
        }
    }

    public String target() {
        return target;
    }

    public FlowListResult list(FlowListRequest r) {
        return call(() -> flows().list(r));
    }

    public FilterHintsResult hints(FilterHintsRequest r) {
        return call(() -> flows().filterHints(r));
    }

    /** Statistics.List streams one result per policy (or rule): bounded by the policies in range. */
    public List<StatisticsResult> statistics(StatisticsRequest r) {
        return call(() -> {
            List<StatisticsResult> out = new ArrayList<>();
            Iterator<StatisticsResult> it = withDeadline(StatisticsGrpc.newBlockingStub(channel)).list(r);
            it.forEachRemaining(out::add);
            return out;
        });
    }

    /** Opens Flows.Stream; the observer owns flow control (it requests each next result). */
    public void stream(FlowStreamRequest r, ClientResponseObserver<FlowStreamRequest, FlowResult> observer) {
        FlowsGrpc.newStub(channel).stream(r, observer);
    }

    /** Called by stream observers: a streamed message is an answer too. */
    public void markAnswered() {
        if (answered.compareAndSet(false, true)) {
            readiness.report(false, true, "");
            log.info("goldmane at {} answered: ready", target);
        }
    }

    /** {@return the failure of a stream as the API reports it} */
    public GoldmaneException failure(Throwable t) {
        Status s = Status.fromThrowable(t);
        if (s.getCode() != Status.Code.UNAVAILABLE) {
            markAnswered();
        }
        return new GoldmaneException(s, target);
    }

    private FlowsGrpc.FlowsBlockingStub flows() {
        return withDeadline(FlowsGrpc.newBlockingStub(channel));
    }

    private <S extends AbstractStub<S>> S withDeadline(S stub) {
        return stub.withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    private <T> T call(Supplier<T> c) {
        try {
            T t = c.get();
            markAnswered();
            return t;
        } catch (StatusRuntimeException e) {
            throw failure(e);
        }
    }

    private void probe() {
        if (answered.get()) {
            prober.shutdown();
            return;
        }
        try {
            hints(FilterHintsRequest.newBuilder().setType(FilterType.FilterTypeSourceNamespace).setPageSize(1)
                    .build());
        } catch (GoldmaneException e) {
            log.debug("goldmane probe: {}", e.getMessage());
        } catch (RuntimeException e) {
            log.warn("goldmane probe failed", e);
        }
    }

    @Override
    public void close() {
        prober.shutdownNow();
        channel.shutdownNow();
        try {
            channel.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

}
