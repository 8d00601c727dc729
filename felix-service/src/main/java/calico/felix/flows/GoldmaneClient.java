package calico.felix.flows;

import calico.libcalico.goldmane.proto.Flow;
import calico.libcalico.goldmane.proto.FlowCollectorGrpc;
import calico.libcalico.goldmane.proto.FlowReceipt;
import calico.libcalico.goldmane.proto.FlowUpdate;
import calico.proto.tls.PemKey;
import io.grpc.ChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.TlsChannelCredentials;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Felix's side of goldmane's FlowCollector contract (goldmane-service/DESIGN.md, "Collector
 * contract"): every report gets the next sequence number once and keeps it; reports stay in a
 * replay cache while their start lies within the replay horizon; after every (re)connect the
 * whole cache is sent again in sequence order, acknowledged or not (an ack means "in the ring",
 * not "on disk"), then new reports follow. Goldmane counts each (node, key, start, end) once, so
 * a restart of goldmane loses nothing and a replay counts nothing twice.
 *
 * <p>Memory is bounded: past {@code maxCached} reports the oldest are dropped and counted
 * ({@link #dropped()}); they are lost only if goldmane had not yet taken them.
 *
 * <p>One thread of its own connects, reconnects (every {@code retry}) and evicts; callers hand
 * reports in with {@link #submit} from any thread.
 */
public final class GoldmaneClient implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(GoldmaneClient.class);

    /**
     * @param target      {@code host:port} ({@code flowLogsGoldmaneServer})
     * @param node        this node's name, sent with every report
     * @param tls         felix's client certificate and goldmane's CA (mutual TLS); null for plain text
     * @param replayHorizon how long a report is kept for replay (goldmane's REPLAY_HORIZON, 5 min)
     * @param maxCached   most reports kept
     * @param retry       wait between connection attempts
     */
    public record Settings(String target, String node, ClientCertificate tls,
                           Duration replayHorizon, int maxCached, Duration retry) {
        public Settings {
            if (target == null || target.isBlank()) {
                throw new IllegalArgumentException("flowLogsGoldmaneServer: required, host:port");
            }
            if (maxCached < 1) {
                throw new IllegalArgumentException("maxCached: at least 1, was " + maxCached);
            }
        }
    }

    private record Cached(long seq, Flow flow) {
    }

    private final Settings settings;
    private final Clock clock;
    private final ManagedChannel channel;
    private final ScheduledExecutorService thread;
    private final Deque<Cached> cache = new ArrayDeque<>();
    private long nextSeq = 1;
    private Stream stream;  // null while disconnected
    private boolean closed;
    private boolean quiet;  // an outage was logged and no receipt came since

    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong acked = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong connects = new AtomicLong();
    private final AtomicLong streamErrors = new AtomicLong();
    /** Why the last stream ended; empty before any ended. */
    private volatile String lastStreamEnd = "";

    public GoldmaneClient(Settings settings, Clock clock) {
        this.settings = settings;
        this.clock = clock;
        this.channel = channel(settings);
        this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "goldmane-client");
            t.setDaemon(true);
            return t;
        });
        thread.scheduleWithFixedDelay(this::maintain, 0, settings.retry().toMillis(), TimeUnit.MILLISECONDS);
    }

    private static ManagedChannel channel(Settings s) {
        int colon = s.target().lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("flowLogsGoldmaneServer: host:port, was '" + s.target() + "'");
        }
        String host = s.target().substring(0, colon);
        int port;
        try {
            port = Integer.parseInt(s.target().substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("flowLogsGoldmaneServer: port of '" + s.target() + "' not a number", e);
        }
        ClientCertificate tls = s.tls();
        if (tls == null) {
            return NettyChannelBuilder.forAddress(host, port).usePlaintext().build();
        }
        try {
            // The channel's authority is the target's host: goldmane's certificate must name it.
            ChannelCredentials creds = TlsChannelCredentials.newBuilder()
                    .keyManager(Files.newInputStream(tls.certFile()), PemKey.pkcs8(tls.keyFile())) // PKCS#1 or #8
                    .trustManager(tls.caFile().toFile()).build();
            return NettyChannelBuilder.forAddress(host, port, creds).build();
        } catch (IOException e) {
            throw new UncheckedIOException("goldmane TLS files (typhaCertFile/typhaKeyFile/typhaCAFile): "
                    + e.getMessage(), e);
        }
    }

    /** Takes one interval's reports: numbered, cached, and sent at once when connected. */
    public synchronized void submit(List<Flow> flows) {
        for (Flow f : flows) {
            Cached c = new Cached(nextSeq++, f);
            cache.addLast(c);
            if (cache.size() > settings.maxCached()) {
                cache.removeFirst();
                dropped.incrementAndGet();
            }
            if (stream != null) {
                stream.send(c);
            }
        }
    }

    /** One connection: sends the cache, then live reports; ends on the first error. */
    private final class Stream implements StreamObserver<FlowReceipt> {
        private StreamObserver<FlowUpdate> out;
        private boolean broken;

        void send(Cached c) {
            if (broken) {
                return;
            }
            try {
                out.onNext(FlowUpdate.newBuilder().setFlow(c.flow()).setSeq(c.seq()).setNode(settings.node()).build());
                sent.incrementAndGet();
            } catch (RuntimeException e) {
                broken = true;
            }
        }

        @Override
        public void onNext(FlowReceipt r) {
            acked.accumulateAndGet(r.getAckSeq(), Math::max);
            quiet = false;
        }

        @Override
        public void onError(Throwable t) {
            ended("stream failed: " + describe(io.grpc.Status.fromThrowable(t)));
        }

        @Override
        public void onCompleted() {
            ended("goldmane ended the stream");
        }

        private void ended(String why) {
            streamErrors.incrementAndGet();
            lastStreamEnd = why;
            synchronized (GoldmaneClient.this) {
                if (stream == this) {
                    stream = null;
                    // Once per outage at info; the retries every `retry` at debug.
                    if (!quiet) {
                        log.info("goldmane {}: {}; reconnecting, then replaying {} cached reports", settings.target(),
                                why, cache.size());
                    } else {
                        log.debug("goldmane {}: {}", settings.target(), why);
                    }
                    quiet = true;
                }
            }
        }
    }

    /** Evicts reports past the horizon; connects and replays when disconnected. */
    private void maintain() {
        try {
            synchronized (this) {
                if (closed) {
                    return;
                }
                long oldest = clock.instant().minus(settings.replayHorizon()).getEpochSecond();
                cache.removeIf(c -> c.flow().getStartTime() < oldest);
                if (stream != null && !stream.broken) {
                    return;
                }
                Stream s = new Stream();
                s.out = FlowCollectorGrpc.newStub(channel).connect(s);
                stream = s;
                connects.incrementAndGet();
                for (Cached c : new ArrayList<>(cache)) {
                    s.send(c);
                }
            }
        } catch (RuntimeException e) {
            log.warn("goldmane {}: {}", settings.target(), e.toString());
        }
    }

    /** {@return reports handed to the transport, replays included} */
    public long sent() {
        return sent.get();
    }

    /** {@return the highest sequence number goldmane acknowledged} */
    public long acked() {
        return acked.get();
    }

    /** {@return reports dropped from a full cache} */
    public long dropped() {
        return dropped.get();
    }

    /** {@return streams opened} */
    public long connects() {
        return connects.get();
    }

    public synchronized int cached() {
        return cache.size();
    }

    /** {@return the highest sequence number handed out} */
    public synchronized long lastSeq() {
        return nextSeq - 1;
    }

    public synchronized boolean connected() {
        return stream != null && !stream.broken;
    }

    /** {@return code, description and the cause's message of a status, on one line} */
    static String describe(io.grpc.Status s) {
        StringBuilder b = new StringBuilder(s.getCode().toString());
        if (s.getDescription() != null) {
            b.append(' ').append(s.getDescription());
        }
        if (s.getCause() != null && s.getCause().getMessage() != null) {
            b.append(" (").append(s.getCause().getMessage()).append(')');
        }
        return b.toString().replace('\n', ' ');
    }

    /** {@return whether the channel to goldmane is up (gRPC state READY); a stream being tried is not enough} */
    public boolean reachable() {
        return channel.getState(false) == io.grpc.ConnectivityState.READY;
    }

    /** {@return streams that ended with an error or were ended by goldmane} */
    public long streamErrors() {
        return streamErrors.get();
    }

    /** {@return null while goldmane is reachable, else what is wrong (channel state, last stream end)} */
    public String problem() {
        if (reachable()) {
            return null;
        }
        String end = lastStreamEnd;
        return "goldmane " + settings.target() + " unreachable (" + channel.getState(false) + ")"
                + (end.isEmpty() ? "" : ": " + end);
    }

    @Override
    public void close() {
        synchronized (this) {
            closed = true;
            if (stream != null) {
                try {
                    stream.out.onCompleted();
                } catch (RuntimeException ignored) {
                    // already gone
                }
                stream = null;
            }
        }
        thread.shutdownNow();
        channel.shutdown();
        try {
            if (!channel.awaitTermination(5, TimeUnit.SECONDS)) {
                channel.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            channel.shutdownNow();
        }
    }
}
