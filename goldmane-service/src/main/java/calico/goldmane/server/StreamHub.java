package calico.goldmane.server;

import calico.goldmane.engine.WindowListener;
import calico.goldmane.query.FlowFilter;
import calico.goldmane.store.Window;
import calico.libcalico.goldmane.proto.FlowResult;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Fans closed windows out to Flows.Stream subscribers on one dispatcher thread (never the
 * writer). A subscriber holds live windows back until its backfill has been sent, and takes only
 * windows after the bucket its backfill ended at.
 */
final class StreamHub implements WindowListener, AutoCloseable {

    /** Windows buffered per subscriber (backfilling or slow) before it is cut off. */
    static final int MAX_PENDING_WINDOWS = 64;

    final class Subscriber {
        private final ServerCallStreamObserver<FlowResult> out;
        private final FlowFilter filter;
        private volatile int after = Integer.MAX_VALUE;
        private boolean live;
        private final List<Window> held = new ArrayList<>();
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
            for (FlowResult r : results) {
                out.onNext(r);
            }
            live = true;
            for (Window w : held) {
                send(w);
            }
            held.clear();
        }

        synchronized void offer(Window w) {
            if (closed || w.bucket() <= after) {
                return;
            }
            if (!live) {
                if (held.size() >= MAX_PENDING_WINDOWS) {
                    fail(Status.RESOURCE_EXHAUSTED.withDescription("stream fell behind during backfill"));
                    return;
                }
                held.add(w);
                return;
            }
            send(w);
        }

        private void send(Window w) {
            for (Window.Row r : w.rows()) {
                if (filter.matches(r.key())) {
                    out.onNext(FlowResult.newBuilder().setId(r.id()).setFlow(r.toFlow(w.start(), w.end())).build());
                }
            }
        }

        synchronized void fail(Status s) {
            if (!closed) {
                closed = true;
                remove();
                try {
                    out.onError(s.asRuntimeException());
                } catch (RuntimeException ignored) {
                    // already cancelled
                }
            }
        }

        synchronized void cancelled() {
            closed = true;
            remove();
        }

        private void remove() {
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

    StreamHub(GoldmaneMetrics metrics) {
        this.metrics = metrics;
    }

    Subscriber subscribe(ServerCallStreamObserver<FlowResult> out, FlowFilter filter) {
        Subscriber s = new Subscriber(out, filter);
        subscribers.add(s);
        metrics.streams().incrementAndGet();
        out.setOnCancelHandler(s::cancelled);
        return s;
    }

    int size() {
        return subscribers.size();
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
