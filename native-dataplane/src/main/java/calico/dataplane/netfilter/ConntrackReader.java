package calico.dataplane.netfilter;

import calico.dataplane.netlink.Errno;
import calico.dataplane.netlink.NetlinkException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the conntrack table over ctnetlink: full dumps ({@code IPCTNL_MSG_CT_GET} with
 * {@code NLM_F_DUMP}, both IP families in one dump) and a subscription to DESTROY events
 * ({@code NFNLGRP_CONNTRACK_DESTROY}), which carry a finished connection's final counters.
 *
 * <p>{@link #open()} creates both sockets in the calling thread's network namespace (the event
 * socket joins its group only when subscribed, so nothing queues before), so a reader always
 * reads the namespace it was opened in, whichever thread calls it later. {@link #dump()} and
 * {@link #delete} are serialized on this object; the subscription reads on a thread of its own.
 *
 * <p>Malformed messages are counted ({@link #malformed()}), never thrown; an overflowing event
 * queue (ENOBUFS: DESTROY events, and so final counters, were lost) is counted
 * ({@link #overruns()}) and logged, and reading goes on.
 */
public final class ConntrackReader implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ConntrackReader.class);
    private static final int NFNLGRP_CONNTRACK_DESTROY = 3;
    private static final Duration POLL = Duration.ofMillis(200);
    private static final Duration LOG_EVERY = Duration.ofSeconds(10);
    private static final int AF_UNSPEC = 0;
    private static final int AF_INET = 2;
    private static final int AF_INET6 = 10;

    private final NfnlSocket requests;
    private final NfnlSocket events;
    private final ConntrackDecoder dumpDecoder = new ConntrackDecoder();
    private Subscription subscription;
    private volatile long overruns;
    private volatile long eventMalformed;
    private volatile long destroyedSeen;
    private boolean closed;

    private ConntrackReader(NfnlSocket requests, NfnlSocket events) {
        this.requests = requests;
        this.events = events;
    }

    /** Opens a reader on the calling thread's network namespace. */
    public static ConntrackReader open() {
        NfnlSocket requests = new NfnlSocket("conntrack requests", 1 << 20, 0);
        try {
            NfnlSocket events = new NfnlSocket("conntrack events", 1 << 18, 8 << 20);
            return new ConntrackReader(requests, events);
        } catch (RuntimeException e) {
            requests.close();
            throw e;
        }
    }

    /**
     * {@return every entry in the table}, IPv4 and IPv6. A dump the kernel flags as interrupted
     * (the table changed under it) is repeated, up to 5 times, then fails with EINTR.
     */
    public synchronized List<ConntrackEntry> dump() {
        checkOpen();
        List<ConntrackEntry> out = new ArrayList<>();
        requests.dump("dump conntrack table",
                () -> new NfRequest(ConntrackDecoder.NFNL_SUBSYS_CTNETLINK, ConntrackDecoder.IPCTNL_MSG_CT_GET,
                        NfnlSocket.NLM_F_REQUEST | NfnlSocket.NLM_F_DUMP, AF_UNSPEC, 0),
                out::clear,
                (type, flags, buf, from, to) -> {
                    ConntrackEntry e = dumpDecoder.decode(type, buf, from, to);
                    if (e != null) {
                        out.add(e);
                    }
                });
        return out;
    }

    /**
     * Deletes the entry whose original direction is {@code original} (the kernel then sends a
     * DESTROY event with its final counters). Only protocols with ports (TCP, UDP, SCTP, UDP-Lite,
     * DCCP): other protocols' entries are keyed by fields a {@link FlowTuple} does not hold.
     *
     * @throws NetlinkException ENOENT ({@link NetlinkException#notFound()}) when there is no such entry
     */
    public synchronized void delete(FlowTuple original) {
        checkOpen();
        if (!PacketParser.hasPorts(original.protocol())) {
            throw new IllegalArgumentException("original: protocol " + original.protocol()
                    + " has no ports; only TCP, UDP, SCTP, UDP-Lite and DCCP entries can be deleted by tuple");
        }
        if (original.src().getAddress().length != original.dst().getAddress().length) {
            throw new IllegalArgumentException("original: " + original + " mixes IPv4 and IPv6");
        }
        int family = original.src().getAddress().length == 4 ? AF_INET : AF_INET6;
        NfRequest r = new NfRequest(ConntrackDecoder.NFNL_SUBSYS_CTNETLINK, ConntrackDecoder.IPCTNL_MSG_CT_DELETE,
                NfnlSocket.NLM_F_REQUEST | NfnlSocket.NLM_F_ACK, family, 0);
        // Always with a tuple: a delete without one flushes the whole table.
        ConntrackDecoder.writeTuple(r, ConntrackDecoder.CTA_TUPLE_ORIG, original);
        requests.execute("delete conntrack entry " + original, r);
    }

    /**
     * Starts delivering DESTROY events to {@code sink}, on a thread of its own, until the
     * returned handle is closed (which waits up to 2 s for the thread; a callback still busy
     * then keeps the subscription until it returns). One subscription at a time.
     *
     * @throws IllegalStateException if a subscription is already running
     */
    public synchronized AutoCloseable subscribeDestroyed(Consumer<ConntrackEntry> sink) {
        checkOpen();
        if (subscription != null) {
            throw new IllegalStateException("conntrack DESTROY events already have a subscriber");
        }
        events.joinGroup("subscribe to conntrack DESTROY events", NFNLGRP_CONNTRACK_DESTROY);
        events.setReceiveTimeout(POLL);
        subscription = new Subscription(sink);
        subscription.thread.start();
        return subscription;
    }

    /** {@return messages (dump replies and events) that could not be decoded} */
    public long malformed() {
        synchronized (this) {
            return dumpDecoder.malformed() + eventMalformed;
        }
    }

    /** {@return how often the event queue overflowed (ENOBUFS): each time, DESTROY events were lost} */
    public long overruns() {
        return overruns;
    }

    /** {@return DESTROY events delivered so far} */
    public long destroyedSeen() {
        return destroyedSeen;
    }

    /** Stops the subscription, if any, and closes both sockets. */
    @Override
    public void close() {
        Subscription s;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            s = subscription;
        }
        if (s != null) {
            s.stop(); // its thread closes the event socket on its way out
        }
        synchronized (this) {
            requests.close();
            if (s == null) {
                events.close();
            }
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("conntrack reader is closed");
        }
    }

    /** The DESTROY event loop; the only user of the event socket while it runs. */
    private final class Subscription implements AutoCloseable {
        private final Consumer<ConntrackEntry> sink;
        private final ConntrackDecoder decoder = new ConntrackDecoder();
        private final Thread thread;
        private volatile boolean running = true;
        private long lastWarning;

        Subscription(Consumer<ConntrackEntry> sink) {
            this.sink = sink;
            this.thread = new Thread(this::loop, "conntrack-destroy-events");
            this.thread.setDaemon(true);
        }

        private void loop() {
            long[] badHeaders = {0};
            NfnlSocket.Handler handler = (type, flags, buf, from, to) -> {
                ConntrackEntry e = decoder.decode(type, buf, from, to);
                if (e != null && e.destroyed()) {
                    destroyedSeen++;
                    try {
                        sink.accept(e);
                    } catch (RuntimeException ex) {
                        warn("conntrack DESTROY callback failed; going on", ex);
                    }
                }
            };
            try {
                while (running) {
                    long n = events.receive(handler, badHeaders);
                    if (n < 0) {
                        onSocketError((int) -n);
                    }
                    eventMalformed = decoder.malformed() + badHeaders[0];
                }
            } catch (RuntimeException | Error e) {
                log.error("conntrack DESTROY event reader stopped by an unexpected error", e);
                throw e;
            } finally {
                // Only now may another subscription start or the socket close: no other thread reads it.
                synchronized (ConntrackReader.this) {
                    if (subscription == this) {
                        subscription = null;
                    }
                    if (closed) {
                        events.close();
                    } else {
                        events.leaveGroup(NFNLGRP_CONNTRACK_DESTROY);
                    }
                }
            }
        }

        private void onSocketError(int errno) {
            if (errno == Errno.ENOBUFS) {
                overruns++;
                warn("conntrack event queue overran (" + overruns + " times so far): DESTROY events and their"
                        + " final counters were lost", null);
                return;
            }
            warn("conntrack event read failed: " + Errno.name(errno) + " (" + Errno.describe(errno) + ")", null);
            try {
                Thread.sleep(100); // a persistent error must not spin a core
            } catch (InterruptedException e) {
                running = false;
            }
        }

        private void warn(String message, Throwable e) {
            long now = System.nanoTime();
            if (lastWarning == 0 || now - lastWarning >= LOG_EVERY.toNanos()) {
                lastWarning = now;
                log.warn(message, e);
            }
        }

        /** Stops the thread and waits for it (unless called from the callback itself). */
        void stop() {
            running = false;
            if (Thread.currentThread() != thread) {
                try {
                    thread.join(POLL.toMillis() * 10);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        @Override
        public void close() {
            stop();
        }
    }
}
