package calico.typha.server;

import calico.libcalico.typha.SyncerType;
import calico.libcalico.typha.proto.ClientHello;
import calico.libcalico.typha.proto.ClientMessage;
import calico.libcalico.typha.proto.Ping;
import calico.libcalico.typha.proto.Reconnect;
import calico.libcalico.typha.proto.ServerHello;
import calico.libcalico.typha.proto.ServerMessage;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client stream. Inbound messages (gRPC's thread) only record facts and request a drain;
 * every outbound call happens in {@link #drain()}, which runs on the connection's event loop,
 * one run at a time, and writes only while the stream {@code isReady()}: it never blocks, so
 * a slow client costs the fan-out nothing but its position. A client whose position the delta
 * log no longer covers is ended with RESOURCE_EXHAUSTED.
 *
 * <p>The snapshot is taken in the drain, once the cache has reached the revisions the client's
 * hello says it has seen, or once {@link ServerSettings#catchUpWait()} is over: a client moving
 * here from a replica that was further along waits instead of being told its newer state is gone.
 */
final class ClientConnection implements StreamObserver<ClientMessage> {

    private static final Logger log = LoggerFactory.getLogger(ClientConnection.class);
    private static final int READ_BATCH = 64;

    /** How this client's messages are compressed, from its hello. */
    enum Compression {
        /** Nothing compressed. */
        NONE(""),
        /** gRPC message compression: gzip per client (clients that only offer "gzip"). */
        GRPC_GZIP("gzip"),
        /** KVs as shared CompressedKVs, compressed once for every such client. */
        KVS_GZIP("kvs-gzip");

        final String wireName;

        Compression(String wireName) {
            this.wireName = wireName;
        }

        static Compression choose(List<String> accepted) {
            return accepted.contains(KVS_GZIP.wireName) ? KVS_GZIP : accepted.contains(GRPC_GZIP.wireName) ? GRPC_GZIP : NONE;
        }
    }

    /** What the hello asked for; {@code seen} and {@code waitUntilNanos} gate the snapshot. */
    private record Start(SnapshotCache cache, Map<String, Long> seen, long waitUntilNanos, ServerMessage hello,
                         Compression compression) {
    }

    private final long id;
    private final SyncService service;
    private final ServerCallStreamObserver<ServerMessage> out;
    private final Executor drainOn;
    private final long openedNanos = System.nanoTime();
    private final AtomicInteger wip = new AtomicInteger();
    private final AtomicReference<Status> closeWith = new AtomicReference<>();
    private final Queue<ServerMessage> control = new ConcurrentLinkedQueue<>();
    private final SnapshotCache.Listener wake = new SnapshotCache.Listener() {
        @Override
        public void wake() {
            requestDrain();
        }

        @Override
        public boolean lagging(long sequence) {
            return streamingDeltas && handedOff < sequence && closeWith.get() == null && out.isReady();
        }
    };

    // Written by the inbound thread, read by the drain.
    private volatile Start start;
    private volatile String hostname = "";
    private volatile long pingSentNanos;
    private volatile boolean helloSeen;
    // Written by the drain, read by the cache's seal decision (SnapshotCache.Listener.lagging).
    private volatile boolean streamingDeltas;
    private volatile long handedOff;
    /** Streaming, but the snapshot waits for this typha to catch up with the client (read by the timer). */
    private volatile boolean awaitingSnapshot;

    // Confined to the drain.
    private boolean streaming;
    private boolean waitLogged;
    private boolean closed;
    private SnapshotCache cache;
    private boolean sharedCompression;
    private Snapshot snapshot;
    private int snapshotIndex;
    private long snapshotTakenNanos;
    private long position;
    private List<Breadcrumb> pending = List.of();
    private int pendingIndex;

    ClientConnection(long id, SyncService service, ServerCallStreamObserver<ServerMessage> out, Executor drainOn) {
        this.id = id;
        this.service = service;
        this.out = out;
        this.drainOn = drainOn;
    }

    long id() {
        return id;
    }

    long openedNanos() {
        return openedNanos;
    }

    String hostname() {
        return hostname;
    }

    // ---- inbound ----

    @Override
    public void onNext(ClientMessage m) {
        switch (m.getPayloadCase()) {
            case HELLO -> onHello(m.getHello());
            case PONG -> {
                if (!helloSeen) {
                    fail(Status.FAILED_PRECONDITION.withDescription("pong: the first message must be a ClientHello"),
                            "protocol");
                } else {
                    long sent = pingSentNanos;
                    Start started = start;
                    if (sent != 0 && started != null) {
                        service.metrics().pingAnswered(started.cache().syncerType(), sent);
                    }
                    pingSentNanos = 0;
                }
            }
            default -> fail(Status.INVALID_ARGUMENT.withDescription(
                    "ClientMessage.payload: empty or unknown message"), "protocol");
        }
    }

    private void onHello(ClientHello h) {
        if (helloSeen) {
            fail(Status.FAILED_PRECONDITION.withDescription("hello: sent twice on one stream"), "protocol");
            return;
        }
        helloSeen = true;
        if (h.getHostname().isBlank()) {
            fail(Status.INVALID_ARGUMENT.withDescription("hello.hostname: required"), "protocol");
            return;
        }
        SyncerType type;
        try {
            type = SyncerType.fromWire(h.getSyncerType());
        } catch (IllegalArgumentException e) {
            fail(Status.INVALID_ARGUMENT.withDescription("hello." + e.getMessage()), "protocol");
            return;
        }
        for (var e : h.getSeenRevisionsMap().entrySet()) {
            if (e.getValue() < 0) {
                fail(Status.INVALID_ARGUMENT.withDescription("hello.seen_revisions[\"" + e.getKey()
                        + "\"]: must not be negative, got " + e.getValue()), "protocol");
                return;
            }
        }
        hostname = h.getHostname();
        SnapshotCache c = service.cache(type);
        Compression compression = Compression.choose(h.getAcceptedCompressionList());
        ServerMessage hello = ServerMessage.newBuilder().setHello(ServerHello.newBuilder()
                .setServerVersion(service.version()).setSyncerType(type.wireName())
                .setCompression(compression.wireName)).build();
        log.info("Client {} ({}, {} {}) connected for {}", id, hostname, h.getClientVersion(),
                compression == Compression.NONE ? "uncompressed" : compression.wireName, type.wireName());
        start = new Start(c, h.getSeenRevisionsMap(), // protobuf's map: already unmodifiable
                System.nanoTime() + service.catchUpWait().toNanos(), hello, compression);
        c.addListener(wake);
        requestDrain();
    }

    @Override
    public void onError(Throwable t) {
        // The client went away (cancelled or broke the connection).
        closeWith.compareAndSet(null, Status.CANCELLED.withDescription("client went away"));
        requestDrain();
    }

    @Override
    public void onCompleted() {
        closeWith.compareAndSet(null, Status.OK);
        requestDrain();
    }

    /** Ends the stream with {@code status} (from any thread); {@code reason} tags the drop metric. */
    void fail(Status status, String reason) {
        if (closeWith.compareAndSet(null, status)) {
            service.metrics().dropped(reason);
            log.info("Dropping client {} ({}), {}: {}", id, hostname, reason, status);
        }
        requestDrain();
    }

    /** Called by the service's timer: pings, and drops clients that stopped answering. */
    void tick(long now, long pongTimeoutNanos) {
        if (!helloSeen) {
            if (now - openedNanos > pongTimeoutNanos) {
                fail(Status.DEADLINE_EXCEEDED.withDescription("hello: none received within the pong timeout"),
                        "timeout");
            }
            return;
        }
        long sent = pingSentNanos;
        if (sent != 0) {
            if (now - sent > pongTimeoutNanos) {
                fail(Status.DEADLINE_EXCEEDED.withDescription("pong: no answer to a ping within the pong timeout"),
                        "timeout");
            }
            return;
        }
        pingSentNanos = now;
        control.add(ServerMessage.newBuilder().setPing(Ping.newBuilder()
                .setSentUnixNanos(System.currentTimeMillis() * 1_000_000L)).build());
        requestDrain();
    }

    /** Called by the server's timer (about once a second): a waiting snapshot notices its deadline. */
    void nudgeIfAwaitingSnapshot() {
        if (awaitingSnapshot) {
            requestDrain();
        }
    }

    /** Asks the client to reconnect elsewhere, then ends the stream. */
    void rebalance(String reason) {
        control.add(ServerMessage.newBuilder().setReconnect(Reconnect.newBuilder().setReason(reason)).build());
        fail(Status.OK, "rebalance");
    }

    // ---- outbound ----

    void requestDrain() {
        if (wip.getAndIncrement() == 0) {
            try {
                drainOn.execute(this::drainLoop);
            } catch (RejectedExecutionException e) {
                // The server is closing and its event loop is gone (a client cancelling, a ping or a
                // seal racing TyphaServer.close): nothing more can be sent on this stream, and the
                // transport's shutdown ends it. Let a later wake-up fail the same quiet way.
                wip.set(0);
                log.debug("Client {} ({}): not draining, the server is closing", id, hostname);
            }
        }
    }

    private void drainLoop() {
        int missed = 1;
        do {
            try {
                drain();
            } catch (RuntimeException e) {
                // A bug or a stream already closed underneath us: end this client, never the server.
                log.warn("Client {} ({}): send failed: {}", id, hostname, e.toString());
                closeWith.compareAndSet(null, Status.INTERNAL.withDescription("send failed: " + e.getMessage()));
                if (!closed) {
                    close();
                    try {
                        out.onError(closeWith.get().asRuntimeException());
                    } catch (RuntimeException ignored) {
                        // already closed
                    }
                }
            }
            missed = wip.addAndGet(-missed);
        } while (missed != 0);
    }

    private void drain() {
        if (closed) {
            if (start != null) {
                start.cache().removeListener(wake); // a hello that raced the close
            }
            return;
        }
        Status end = closeWith.get();
        if (!streaming && start != null && end == null) {
            Start s = start;
            cache = s.cache();
            awaitingSnapshot = true;
            if (s.compression() == Compression.GRPC_GZIP) {
                out.setCompression("gzip");
            }
            sharedCompression = s.compression() == Compression.KVS_GZIP;
            streaming = true;
            // First on the stream, whatever is queued: a ping the timer queued between the hello
            // and this drain went out before the ServerHello under load (protocol invariant 2).
            out.onNext(s.hello());
        }
        if (end != null) {
            sendPendingControl(end);
            close();
            if (end.isOk()) {
                out.onCompleted();
            } else {
                out.onError(end.asRuntimeException());
            }
            return;
        }
        if (!streaming) {
            return;
        }
        if (awaitingSnapshot && !takeSnapshot()) {
            for (ServerMessage m; out.isReady() && (m = control.poll()) != null; ) {
                out.onNext(m); // pings
            }
            return;
        }
        while (out.isReady()) {
            ServerMessage next = control.poll();
            if (next == null && snapshot != null) {
                next = form(snapshot.messages().get(snapshotIndex++));
                if (snapshotIndex == snapshot.messages().size()) {
                    service.metrics().snapshotSent(cache.syncerType(), System.nanoTime() - snapshotTakenNanos);
                    snapshot = null;
                    handedOff = position;
                    streamingDeltas = true;
                }
            }
            if (next == null) {
                if (pendingIndex >= pending.size()) {
                    if (!refill()) {
                        return;
                    }
                    if (pending.isEmpty()) {
                        break;
                    }
                }
                Breadcrumb b = pending.get(pendingIndex++);
                position = b.sequence();
                handedOff = position;
                service.metrics().fanout(cache.syncerType(), b.createdNanos());
                next = form(b.message());
            }
            out.onNext(next);
        }
        // Not ready (or nothing to send): still notice a client the log has left behind.
        long need = pendingIndex < pending.size() ? pending.get(pendingIndex).sequence() - 1 : position;
        if (!cache.covers(need)) {
            fail(Status.RESOURCE_EXHAUSTED.withDescription("client fell too far behind: it is at sequence " + need
                    + ", the delta log no longer holds what follows"), "fell-behind");
        }
    }

    /**
     * Takes the snapshot once the cache has reached what the client has seen, or once the wait
     * is over (then from where this typha is: the client may see deletions it later gets back).
     * {@return false while still waiting}
     */
    private boolean takeSnapshot() {
        Start s = start;
        boolean caughtUp = cache.reached(s.seen());
        long now = System.nanoTime();
        if (!caughtUp) {
            if (now - s.waitUntilNanos() < 0) {
                if (!waitLogged) {
                    waitLogged = true;
                    log.info("Client {} ({}) has seen more than this typha (kind: here/seen {}); its snapshot waits",
                            id, hostname, cache.shortOf(s.seen()));
                }
                return false;
            }
            log.warn("Client {} ({}): this typha is still behind what the client has seen after {} ms "
                            + "(kind: here/seen {}); sending the snapshot from here", id, hostname,
                    service.catchUpWait().toMillis(), cache.shortOf(s.seen()));
            service.metrics().caughtUp(false);
        } else if (waitLogged) {
            log.info("Client {} ({}): this typha caught up; sending the snapshot", id, hostname);
            service.metrics().caughtUp(true);
        }
        snapshot = cache.snapshot(s.seen());
        snapshotTakenNanos = System.nanoTime();
        position = snapshot.sequence();
        awaitingSnapshot = false;
        return true;
    }

    private ServerMessage form(SharedMessage m) {
        return sharedCompression ? m.compressed() : m.plain();
    }

    /** Reads the next breadcrumbs; false (and the stream ended) when the client fell behind. */
    private boolean refill() {
        try {
            pending = cache.after(position, READ_BATCH);
            pendingIndex = 0;
            return true;
        } catch (FellBehindException e) {
            fail(Status.RESOURCE_EXHAUSTED.withDescription(e.getMessage()), "fell-behind");
            return false;
        }
    }

    private void sendPendingControl(Status end) {
        if (!streaming || !end.isOk()) {
            return;
        }
        for (ServerMessage m; (m = control.poll()) != null; ) {
            if (m.hasReconnect()) {
                out.onNext(m);
            }
        }
    }

    private void close() {
        closed = true;
        if (cache != null) {
            cache.removeListener(wake);
        } else if (start != null) {
            start.cache().removeListener(wake);
        }
        snapshot = null;
        pending = List.of();
        service.closed(this);
    }
}
