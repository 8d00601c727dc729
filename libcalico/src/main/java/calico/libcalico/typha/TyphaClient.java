package calico.libcalico.typha;

import calico.api.model.ResourceKey;
import calico.libcalico.syncer.SyncerCallbacks;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import calico.libcalico.syncer.UpdateType;
import calico.libcalico.typha.proto.ClientHello;
import calico.libcalico.typha.proto.ClientMessage;
import calico.libcalico.typha.proto.KV;
import calico.libcalico.typha.proto.KVs;
import calico.libcalico.typha.proto.Pong;
import calico.libcalico.typha.proto.ServerMessage;
import calico.libcalico.typha.proto.TyphaGrpc;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A syncer that reads through typha: it presents the same {@link SyncerCallbacks} contract as
 * {@code WatcherSyncer} (status forward once; NEW only for unknown keys, UPDATED/DELETED only for
 * known ones; a value the listener has is never sent again), so a consumer can use either.
 *
 * <p>It keeps the listener's view (key → revision). On every (re)connection typha sends a full
 * snapshot; the client diffs it against the view, so after a reconnect the listener sees only
 * what changed while it was away; deletions of keys the stream never mentioned come when the
 * stream reports IN_SYNC (a snapshot taken while typha itself was still syncing is partial). Then
 * deltas follow in typha's order. Each hello carries, per kind, the highest revision received
 * so far, and typha holds the snapshot until it has caught up with that (bounded), so a move to
 * a replica whose watch is behind does not look like deletions. Reconnects rotate through the
 * addresses with doubling backoff of ours (jittered, capped: 1 s by default), and each attempt resets
 * the gRPC channel's own connect backoff: otherwise, after a long outage, the channel stays in
 * TRANSIENT_FAILURE for up to two minutes and every attempt of ours fails at once with the old error
 * although typha is back. The stream opens once that dial has an outcome (READY, or its own failure), so
 * an attempt that starts just after typha is back is not failed by the previous dial's error. A {@code Reconnect} message (rebalancing) moves on at once.
 *
 * <p>Callbacks are never concurrent and come in order, but not always from the same thread
 * (gRPC's callback threads; one connection at a time). The connection listener hears each change of
 * {@link ConnectionStats#connected()} as it happens (a stream's first message from typha, the stream's
 * end), so that a component's health says "connected" at once rather than at its next periodic check.
 */
public final class TyphaClient implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(TyphaClient.class);

    /** Shared compressed KVs first; gRPC gzip for servers that predate them. */
    static final List<String> ACCEPTED_COMPRESSION = List.of("kvs-gzip", "gzip");

    private final TyphaClientOptions options;
    private final SyncerCallbacks callbacks;
    private final Consumer<ConnectionStats> connectionListener;
    private final ScheduledExecutorService timer;
    private final Map<String, ManagedChannel> channels = new HashMap<>();
    private final Object lock = new Object();

    // Guarded by lock.
    private final Map<ResourceKey, Long> view = new HashMap<>();
    /** Per kind, the highest revision any stream has sent; every hello carries it. */
    private final Map<String, Long> seenRevisions = new HashMap<>();
    private final KvsInflater inflater = new KvsInflater();
    /** Keys this stream has mentioned, until the stream reaches IN_SYNC; then null. */
    private Set<ResourceKey> seenInSnapshot;
    /** Whether this stream's last snapshot chunk has arrived. */
    private boolean chunksDone;
    private long streamMaxRevision;
    private SyncerStatus status;
    private int generation;
    private int addressIndex = -1;
    /** The replicas rotated through: options.addresses(), then each rediscovery's answer. */
    private List<String> addresses;
    private Duration backoff;
    private ClientCallStreamObserver<ClientMessage> call;
    private long lastReceivedNanos;
    /**
     * The connection's state: replaced whole under the lock, read without it by {@link #connectionStats()}
     * (callbacks run under the lock, and a listener that holds a lock of its own while asking for the stats,
     * felix's health report, would otherwise wait for ours while our callback waits for its lock).
     */
    private volatile Connection connection = new Connection(false, false, null, 0, 0);

    /**
     * @param running                whether the client is started and not closed
     * @param connected              whether the current stream has heard from typha
     * @param address                the current stream's typha, or null between streams
     * @param attempts               streams opened so far
     * @param disconnectedSinceNanos nanoTime since when no stream has heard from typha (set at start)
     */
    private record Connection(boolean running, boolean connected, String address, long attempts,
                              long disconnectedSinceNanos) {

        Connection started(long now) {
            return new Connection(true, connected, address, attempts, now);
        }

        Connection closed() {
            return new Connection(false, connected, address, attempts, disconnectedSinceNanos);
        }

        Connection opening() {
            return new Connection(running, connected, address, attempts + 1, disconnectedSinceNanos);
        }

        Connection streamTo(String to) {
            return new Connection(running, connected, to, attempts, disconnectedSinceNanos);
        }

        Connection heard() {
            return new Connection(running, true, address, attempts, disconnectedSinceNanos);
        }

        Connection ended(long now) {
            return new Connection(running, false, null, attempts, connected ? now : disconnectedSinceNanos);
        }
    }

    public TyphaClient(TyphaClientOptions options, SyncerCallbacks callbacks) {
        this(options, callbacks, stats -> { });
    }

    /**
     * @param connectionListener told the {@link #connectionStats()} whenever {@code connected} changes; called on
     *                           gRPC's or the client's timer thread, outside the client's lock: a listener that
     *                           reports should read the state again under its own lock (the latest wins)
     */
    public TyphaClient(TyphaClientOptions options, SyncerCallbacks callbacks, Consumer<ConnectionStats> connectionListener) {
        this.options = options;
        this.callbacks = callbacks;
        this.connectionListener = Objects.requireNonNull(connectionListener, "connectionListener");
        this.addresses = options.addresses();
        this.backoff = options.initialBackoff();
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "typha-client-" + options.hostname());
            t.setDaemon(true);
            return t;
        });
    }

    public void start() {
        synchronized (lock) {
            if (connection.running()) {
                return;
            }
            connection = connection.started(System.nanoTime());
            setStatus(SyncerStatus.WAIT_FOR_DATASTORE);
        }
        long check = Math.max(10, options.readTimeout().toMillis() / 4);
        timer.scheduleWithFixedDelay(this::checkReadTimeout, check, check, TimeUnit.MILLISECONDS);
        timer.execute(this::connect);
    }

    /** {@return the status last reported to the listener} */
    public SyncerStatus status() {
        synchronized (lock) {
            return status == null ? SyncerStatus.WAIT_FOR_DATASTORE : status;
        }
    }

    /** {@return how many streams have been opened so far} */
    public long connections() {
        return connection.attempts();
    }

    /** {@return the address of the current stream, or null between streams} */
    public String connectedTo() {
        return connection.address();
    }

    /**
     * What the client says about its connection, for status and metrics.
     *
     * @param connected       whether the current stream has heard from typha
     * @param address         the current stream's typha, or null between streams
     * @param attempts        streams opened so far (the first connection counts)
     * @param disconnectedFor how long no stream has heard from typha; zero while connected
     */
    public record ConnectionStats(boolean connected, String address, long attempts, Duration disconnectedFor) {
    }

    /** {@return the connection's state now}; never waits for the client's lock (see {@link #connection}) */
    public ConnectionStats connectionStats() {
        Connection p = connection;
        return new ConnectionStats(p.connected(), p.address(), p.attempts(), p.connected() || !p.running() ? Duration.ZERO
                : Duration.ofNanos(System.nanoTime() - p.disconnectedSinceNanos()));
    }

    /** {@return how many keys the listener currently knows} */
    public int viewSize() {
        synchronized (lock) {
            return view.size();
        }
    }

    @Override
    public void close() {
        ClientCallStreamObserver<ClientMessage> c;
        synchronized (lock) {
            connection = connection.closed();
            generation++;
            c = call;
            call = null;
            inflater.close(); // no stream of this client handles messages any more
        }
        if (c != null) {
            c.cancel("client closed", null);
        }
        timer.shutdownNow();
        synchronized (channels) {
            channels.values().forEach(ManagedChannel::shutdownNow);
            channels.clear();
        }
    }

    /** {@return whether every replica has been tried since the list was last read} (false without rediscovery) */
    private boolean rotationDone() {
        synchronized (lock) {
            return options.rediscovery() != null && addressIndex >= 0 && addressIndex + 1 >= addresses.size();
        }
    }

    /** {@return the replicas read again}, or null to keep the current ones (the failure is logged; retried next round) */
    private List<String> rediscover() {
        try {
            List<String> found = TyphaClientOptions.checkedAddresses(options.rediscovery().get());
            log.info("Typha replicas read again: {}", found);
            return found;
        } catch (RuntimeException e) {
            log.warn("Reading typha replicas again failed ({}); keeping the current ones", e.getMessage());
            return null;
        }
    }

    private void connect() {
        int gen;
        String address;
        List<String> fresh = rotationDone() ? rediscover() : null; // outside the lock: it may call an API server
        synchronized (lock) {
            if (!connection.running()) {
                return;
            }
            gen = ++generation;
            if (fresh != null) {
                addresses = fresh;
                addressIndex = -1;
            }
            addressIndex = (addressIndex + 1) % addresses.size();
            address = addresses.get(addressIndex);
            connection = connection.opening();
            lastReceivedNanos = System.nanoTime();
            seenInSnapshot = new HashSet<>();
            chunksDone = false;
            streamMaxRevision = 0;
        }
        long startedNanos = System.nanoTime();
        ManagedChannel channel;
        synchronized (channels) {
            channel = channels.computeIfAbsent(address, options.channels());
        }
        // The first channel of a process costs its class loading (about a second of felix's start-up at load 10).
        log.debug("Connecting to typha at {} (stream {}; channel there in {} ms)", address, gen,
                (System.nanoTime() - startedNanos) / 1_000_000);
        AtomicBoolean opened = new AtomicBoolean();
        Consumer<String> open = why -> {
            if (opened.compareAndSet(false, true)) {
                log.debug("Opening stream {} to typha at {} {} ms after the attempt began: {}", gen, address,
                        (System.nanoTime() - startedNanos) / 1_000_000, why);
                openStream(channel, gen, address);
            }
        };
        ConnectivityState before;
        try {
            before = channel.getState(true);
        } catch (UnsupportedOperationException noStates) {
            channel.resetConnectBackoff();
            open.accept("the channel shows no states");
            return;
        }
        if (before == ConnectivityState.READY) {
            open.accept("the channel was ready");
            return;
        }
        whenDialSettled(channel, before, open);
        // gRPC keeps its own backoff per channel; ours decides when to try, so the channel must dial now.
        channel.resetConnectBackoff();
        long fallback = Math.max(2_000, 2 * options.maxBackoff().toMillis());
        try {
            // A dial that shows no outcome (a channel that does not dial again): the stream goes as it is.
            timer.schedule(() -> open.accept("the dial showed no outcome within " + fallback + " ms (fallback)"),
                    fallback, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException closed) {
            // closed meanwhile
        }
    }

    /**
     * Opens the stream once the dial this attempt starts has an outcome. A stream started while the channel
     * is still in TRANSIENT_FAILURE from an earlier dial fails at once with that old error, although the dial
     * just started (typha back meanwhile) is about to succeed, and the client would wait a whole backoff step
     * for nothing. Registered before the dial starts: READY opens it, and so does a failure (then with
     * this dial's error); CONNECTING and IDLE wait on. pick_first keeps a failed channel in TRANSIENT_FAILURE
     * until it is READY (its redials show no CONNECTING): while typha stays away only the caller's timer
     * opens the stream, which then fails at once and backs off.
     */
    private static void whenDialSettled(ManagedChannel channel, ConnectivityState seen, Consumer<String> open) {
        channel.notifyWhenStateChanged(seen, () -> {
            ConnectivityState now = channel.getState(false);
            if (now == ConnectivityState.CONNECTING || now == ConnectivityState.IDLE) {
                whenDialSettled(channel, now, open);
            } else {
                open.accept("the dial's outcome: " + seen + " -> " + now);
            }
        });
    }

    private void openStream(ManagedChannel channel, int gen, String address) {
        synchronized (lock) {
            if (gen != generation) {
                return;
            }
        }
        var requests = TyphaGrpc.newStub(channel).sync(new Stream(gen, address));
        synchronized (lock) {
            if (gen == generation) {
                requests.onNext(ClientMessage.newBuilder().setHello(hello()).build());
            }
        }
    }

    private void scheduleReconnect(int gen, boolean immediately, String why) {
        Duration wait;
        boolean lost;
        synchronized (lock) {
            if (!connection.running() || gen != generation) {
                return;
            }
            generation++;
            call = null;
            lost = connection.connected();
            connection = connection.ended(System.nanoTime());
            wait = immediately ? Duration.ZERO : jittered(backoff);
            Duration doubled = backoff.multipliedBy(2);
            backoff = doubled.compareTo(options.maxBackoff()) > 0 ? options.maxBackoff() : doubled;
        }
        log.info("Typha stream ended ({}); reconnecting in {} ms", why, wait.toMillis());
        if (lost) {
            connectionListener.accept(connectionStats());
        }
        try {
            timer.schedule(this::connect, wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException closed) {
            // closed meanwhile
        }
    }

    /** {@return d ± 20 %}: clients that lost the same typha do not all come back in the same instant. */
    private static Duration jittered(Duration d) {
        return Duration.ofNanos((long) (d.toNanos() * ThreadLocalRandom.current().nextDouble(0.8, 1.2)));
    }

    private void checkReadTimeout() {
        ClientCallStreamObserver<ClientMessage> c;
        int gen;
        synchronized (lock) {
            if (call == null || System.nanoTime() - lastReceivedNanos < options.readTimeout().toNanos()) {
                return;
            }
            c = call;
            gen = generation;
        }
        c.cancel("read timeout", null);
        scheduleReconnect(gen, false, "nothing received for " + options.readTimeout());
    }

    private void setStatus(SyncerStatus s) {
        if (status == null || s.compareTo(status) > 0) {
            status = s;
            callbacks.onStatusUpdated(s);
        }
    }

    /** Handles one message of the current stream; called under lock. {@return whether it is the first typha sent since the client was last connected} */
    private boolean handle(ClientCallStreamObserver<ClientMessage> c, ServerMessage m) {
        lastReceivedNanos = System.nanoTime();
        boolean first = !connection.connected();
        if (first) {
            connection = connection.heard();
            log.info("Connected to typha at {} (attempt {}, {} ms after the last stream was lost)", connection.address(),
                    connection.attempts(), (lastReceivedNanos - connection.disconnectedSinceNanos()) / 1_000_000);
        }
        switch (m.getPayloadCase()) {
            case HELLO -> {
                if (!m.getHello().getSyncerType().equals(options.syncerType().wireName())) {
                    throw new IllegalStateException("typha answered for syncer type \"" + m.getHello().getSyncerType()
                            + "\", asked for \"" + options.syncerType().wireName() + "\"");
                }
            }
            case KVS -> onKvs(m.getKvs());
            case COMPRESSED_KVS -> onKvs(inflater.inflate(m.getCompressedKvs()));
            case STATUS -> {
                SyncerStatus s = switch (m.getStatus().getStatus()) {
                    case IN_SYNC -> SyncerStatus.IN_SYNC;
                    case RESYNC_IN_PROGRESS -> SyncerStatus.RESYNC_IN_PROGRESS;
                    default -> SyncerStatus.WAIT_FOR_DATASTORE;
                };
                if (s == SyncerStatus.IN_SYNC) {
                    if (!chunksDone) {
                        throw new IllegalStateException("IN_SYNC before the last snapshot chunk");
                    }
                    streamInSync();
                    setStatus(SyncerStatus.RESYNC_IN_PROGRESS);
                }
                setStatus(s);
            }
            case PING -> c.onNext(ClientMessage.newBuilder()
                    .setPong(Pong.newBuilder().setPingSentUnixNanos(m.getPing().getSentUnixNanos())).build());
            case RECONNECT -> throw new ReconnectRequested(m.getReconnect().getReason());
            default -> throw new IllegalStateException("unexpected message " + m.getPayloadCase());
        }
        return first;
    }

    private void onKvs(KVs kvs) {
        List<Update> out = new ArrayList<>(kvs.getKvsCount());
        boolean snapshot = kvs.getSnapshot();
        if (snapshot && chunksDone) {
            throw new IllegalStateException("snapshot chunk after the last snapshot chunk");
        }
        if (!snapshot && !chunksDone) {
            throw new IllegalStateException("delta before the last snapshot chunk");
        }
        for (KV kv : kvs.getKvsList()) {
            ResourceKey key = KvCodec.key(kv);
            streamMaxRevision = Math.max(streamMaxRevision, kv.getRevision());
            seenRevisions.merge(kv.getKind(), kv.getRevision(), Math::max);
            Long known = view.get(key);
            if (seenInSnapshot != null) {
                seenInSnapshot.add(key);
            }
            if (kv.getType() == calico.libcalico.typha.proto.UpdateType.DELETED) {
                if (known != null) {
                    view.remove(key);
                    out.add(Update.deleted(key, kv.getRevision()));
                }
            } else if (known == null || known != kv.getRevision()) {
                view.put(key, kv.getRevision());
                out.add(KvCodec.toUpdate(kv, known == null ? UpdateType.NEW : UpdateType.UPDATED));
            }
        }
        if (snapshot && kvs.getLastSnapshotChunk()) {
            chunksDone = true;
        }
        deliver(out);
    }

    /**
     * The server is in sync and this stream has told us its whole state (snapshot plus deltas):
     * what the listener knows and the stream never mentioned is gone. Deletions wait for this
     * point because a snapshot taken before the server's own IN_SYNC may be partial.
     */
    private void streamInSync() {
        if (seenInSnapshot == null) {
            return;
        }
        List<Update> out = new ArrayList<>();
        for (var it = view.entrySet().iterator(); it.hasNext(); ) {
            var e = it.next();
            if (!seenInSnapshot.contains(e.getKey())) {
                it.remove();
                out.add(Update.deleted(e.getKey(), streamMaxRevision));
            }
        }
        seenInSnapshot = null;
        backoff = options.initialBackoff();
        deliver(out);
    }

    private void deliver(List<Update> out) {
        if (!out.isEmpty()) {
            setStatus(SyncerStatus.RESYNC_IN_PROGRESS);
            callbacks.onUpdates(List.copyOf(out));
        }
    }

    private static final class ReconnectRequested extends RuntimeException {
        ReconnectRequested(String reason) {
            super(reason, null, false, false);
        }
    }

    /** One stream; ignores everything once it is no longer the current generation. */
    private final class Stream implements ClientResponseObserver<ClientMessage, ServerMessage> {
        private final int gen;
        private final String address;
        private ClientCallStreamObserver<ClientMessage> requests;

        Stream(int gen, String address) {
            this.gen = gen;
            this.address = address;
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<ClientMessage> requestStream) {
            this.requests = requestStream;
            synchronized (lock) {
                if (gen != generation) {
                    requestStream.cancel("superseded", null);
                    return;
                }
                call = requestStream;
                connection = connection.streamTo(address);
            }
        }

        @Override
        public void onNext(ServerMessage m) {
            String failure = null;
            boolean rebalance = false;
            boolean nowConnected = false;
            synchronized (lock) {
                if (gen != generation) {
                    return;
                }
                try {
                    nowConnected = handle(requests, m);
                } catch (ReconnectRequested r) {
                    rebalance = true;
                    failure = "typha asked us to reconnect: " + r.getMessage();
                } catch (RuntimeException e) {
                    failure = "protocol error: " + e.getMessage();
                    log.warn("Typha at {} sent a bad message: {}", address, e.toString());
                }
            }
            if (failure != null) {
                requests.cancel(failure, null);
                scheduleReconnect(gen, rebalance, failure);
            } else if (nowConnected) {
                connectionListener.accept(connectionStats());
            }
        }

        @Override
        public void onError(Throwable t) {
            scheduleReconnect(gen, false, describe(Status.fromThrowable(t)));
        }

        @Override
        public void onCompleted() {
            scheduleReconnect(gen, false, "typha closed the stream");
        }
    }

    /** {@return the status in one line}: gRPC's own text carries the cause's whole stack trace, once per attempt. */
    static String describe(Status s) {
        StringBuilder out = new StringBuilder(s.getCode().name());
        if (s.getDescription() != null) {
            out.append(": ").append(s.getDescription());
        }
        if (s.getCause() != null) {
            out.append(" (").append(s.getCause()).append(')');
        }
        return out.toString();
    }

    /** Called under lock. */
    private ClientHello hello() {
        return ClientHello.newBuilder()
                .putAllSeenRevisions(seenRevisions)
                .setHostname(options.hostname())
                .setSyncerType(options.syncerType().wireName())
                .setClientVersion(options.clientVersion())
                .addAllAcceptedCompression(options.compression() ? ACCEPTED_COMPRESSION : List.of())
                .build();
    }
}
