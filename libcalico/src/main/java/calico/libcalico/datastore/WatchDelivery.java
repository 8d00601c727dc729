package calico.libcalico.datastore;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The listener side of one backend watch: events are queued to a single daemon thread named
 * after the watch, so the listener sees them in order, one at a time, and may close the watch
 * from inside a callback. At most one terminal event is queued; after {@link #close} nothing
 * more reaches the listener. Each backend's watch owns one and adds only its stream handling.
 */
public final class WatchDelivery {

    private static final Logger LOG = LoggerFactory.getLogger(WatchDelivery.class);

    private final String name;
    private final WatchListener listener;
    private final ExecutorService executor;
    private final AtomicBoolean ended = new AtomicBoolean();
    private volatile boolean closed;

    public WatchDelivery(String name, WatchListener listener) {
        this.name = name;
        this.listener = listener;
        this.executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
    }

    /** {@return whether the watch has ended} (a terminal event queued, or closed) */
    public boolean ended() {
        return ended.get();
    }

    /** Queues {@code event}; a listener that throws is logged and the watch goes on. */
    public void deliver(WatchEvent event) {
        try {
            executor.execute(() -> {
                if (closed) {
                    return;
                }
                try {
                    listener.onEvent(event);
                } catch (RuntimeException e) {
                    LOG.warn("{}: listener threw on {}; continuing", name, event.getClass().getSimpleName(), e);
                }
            });
        } catch (RejectedExecutionException e) {
            // closed meanwhile: dropping is what close() promises
        }
    }

    /**
     * Queues the terminal event unless the watch already ended, then runs {@code stopStreams}
     * and lets the delivery thread drain and exit.
     *
     * @return whether this call ended the watch
     */
    public boolean end(WatchEvent terminal, Runnable stopStreams) {
        if (!ended.compareAndSet(false, true)) {
            return false;
        }
        deliver(terminal);
        stopStreams.run();
        executor.shutdown();
        return true;
    }

    /**
     * Drops every event not yet handed to the listener and runs {@code stopStreams}. A callback
     * already running finishes (it may be the caller itself); none starts after this returns. Not
     * {@code shutdownNow()}: interrupting a listener that closes its own watch would break
     * whatever it does next.
     */
    public void close(Runnable stopStreams) {
        closed = true;
        ended.set(true);
        stopStreams.run();
        executor.shutdown();
    }
}
