package calico.goldmane.server;

import calico.goldmane.engine.WindowListener;
import calico.goldmane.query.FlowFilter;
import calico.goldmane.store.Window;
import calico.libcalico.goldmane.proto.FlowResult;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Fans closed windows out to Flows.Stream subscribers on one dispatcher thread (never the
 * writer). A subscriber holds live windows back until its backfill has been sent, and takes only
 * windows after the bucket its backfill ended at.
 *
 * <p>Each subscriber sends only while gRPC says its transport can take more ({@code isReady()});
 * the rest waits in the subscriber's own queue of closed windows, drained by gRPC's on-ready
 * callback. That queue is bounded: a subscriber that has {@link #MAX_PENDING_WINDOWS} windows
 * waiting when another closes is ended with RESOURCE_EXHAUSTED, so a client that stops reading
 * costs at most that much memory and never slows another subscriber (the dispatcher only
 * queues and sends what the transport takes, it never waits).
 */
final class StreamHub implements WindowListener, AutoCloseable {

    /** Closed windows queued per subscriber (backfilling or slow) before it is ended. */
    static final int MAX_PENDING_WINDOWS = 64;

    static final String FELL_BEHIND = "stream fell behind: " + MAX_PENDING_WINDOWS
            + " closed windows were already waiting to be sent (the per-stream bound); read faster or reconnect";

    final class Subscriber {
        private final ServerCallStreamObserver<FlowResult> out;
        private final FlowFilter filter;
        private volatile int after = Integer.MAX_VALUE;
        /** Whether the backfill has arrived: nothing is sent before it. */
        private boolean live;
        /** The results being sent: the backfill's, then each window's in turn. */
        private Iterator<FlowResult> sending = Collections.emptyIterator();
        private final ArrayDeque<Window> pending = new ArrayDeque<>();
        private boolean closed;

        Subscriber(ServerCallStreamObserver<FlowResult> out, FlowFilter filter) {
            this.out = out;
            this.filter = filter;
        }

        /** On the writer: live windows are those after this bucket. */
        void liveAfter(int bucket) {
            after = bucket;
        }

        synchronized void backfill(List<FlowResult> results) {
            if (closed) {
                return;
            }
            live = true;
            sending = results.iterator();
            drain();
        }

        synchronized void offer(Window w) {
            if (closed || w.bucket() <= after) {
                return;
            }
            if (pending.size() >= MAX_PENDING_WINDOWS) {
                fail(Status.RESOURCE_EXHAUSTED.withDescription(FELL_BEHIND));
                return;
            }
            pending.add(w);
            highWater.accumulateAndGet(pending.size(), Math::max);
            drain();
        }

        /** Sends while the transport takes more; on the dispatcher, and on gRPC's on-ready callback. */
        synchronized void drain() {
            if (closed || !live) {
                return;
            }
            while (out.isReady()) {
                if (sending.hasNext()) {
                    out.onNext(sending.next());
                } else if (pending.isEmpty()) {
                    return;
                } else {
                    sending = results(pending.poll());
                }
            }
        }

        private Iterator<FlowResult> results(Window w) {
            return w.rows().stream().filter(r -> filter.matches(r.key()))
                    .map(r -> FlowResult.newBuilder().setId(r.id()).setFlow(r.toFlow(w.start(), w.end())).build())
                    .iterator();
        }

        synchronized void fail(Status s) {
            if (!closed) {
                close();
                try {
                    out.onError(s.asRuntimeException());
                } catch (RuntimeException ignored) {
                    // already cancelled
                }
            }
        }

        synchronized void cancelled() {
            close();
        }

        private void close() {
            closed = true;
            pending.clear();
            sending = Collections.emptyIterator();
            if (subscribers.remove(this)) {
                metrics.streams().decrementAndGet();
            }
        }
    }

    private final List<Subscriber> subscribers = new CopyOnWriteArrayList<>();
    private final ExecutorService dispatcher = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "goldmane-streams");
        t.setDaemon(true);
        return t;
    });
    private final GoldmaneMetrics metrics;
    /** The most windows any subscriber has had waiting (tests check the bound holds). */
    private final AtomicInteger highWater = new AtomicInteger();

    StreamHub(GoldmaneMetrics metrics) {
        this.metrics = metrics;
    }

    /** Call from the service method itself: gRPC takes the handlers only before it returns. */
    Subscriber subscribe(ServerCallStreamObserver<FlowResult> out, FlowFilter filter) {
        Subscriber s = new Subscriber(out, filter);
        subscribers.add(s);
        metrics.streams().incrementAndGet();
        out.setOnCancelHandler(s::cancelled);
        out.setOnReadyHandler(s::drain);
        return s;
    }

    int size() {
        return subscribers.size();
    }

    int highWater() {
        return highWater.get();
    }

    @Override
    public void onWindow(Window w) {
        if (w.late() || w.isEmpty() || subscribers.isEmpty()) {
            return;
        }
        dispatcher.execute(() -> {
            for (Subscriber s : subscribers) {
                try {
                    s.offer(w);
                } catch (RuntimeException e) {
                    s.fail(Status.INTERNAL.withDescription("send failed"));
                }
            }
        });
    }

    @Override
    public void close() {
        for (Subscriber s : subscribers) {
            s.fail(Status.UNAVAILABLE.withDescription("goldmane is shutting down"));
        }
        dispatcher.shutdownNow();
    }
}
