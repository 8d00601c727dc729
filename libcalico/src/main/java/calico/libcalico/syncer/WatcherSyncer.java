package calico.libcalico.syncer;

import calico.api.model.ResourceKind;
import calico.libcalico.datastore.Datastore;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivers a set of kinds from a {@link Datastore} to {@link SyncerCallbacks}: status
 * {@code WAIT_FOR_DATASTORE}, then {@code RESYNC_IN_PROGRESS} as soon as any kind answers, the
 * initial snapshot as {@code NEW} updates, {@code IN_SYNC} once every kind's snapshot has been
 * delivered, and from then on the changes in order. Watch failures and compactions are healed
 * inside (see {@link WatcherCache}); the listener only ever sees the differences.
 *
 * <pre>
 *   Datastore ──watch/list──► WatcherCache (one thread per kind) ──┐
 *   Datastore ──watch/list──► WatcherCache                        ├─► results queue ──► dispatch thread ──► SyncerCallbacks
 *   Datastore ──watch/list──► WatcherCache                        ┘    (bounded)        (batches, status)
 * </pre>
 *
 * <p>Lifecycle: {@link #start()} once; {@link #stop()} (or {@link #close()}) ends every thread and
 * returns only when no callback is running or will run, unless called from inside a callback,
 * in which case no further callback is made after that one returns. A stopped syncer cannot be
 * restarted: make a new one.
 */
public final class WatcherSyncer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(WatcherSyncer.class);

    private enum State { NEW, RUNNING, STOPPED }

    private final SyncerCallbacks callbacks;
    private final SyncerOptions options;
    private final List<WatcherCache> caches = new ArrayList<>();
    private final BlockingQueue<CacheResult> results;
    private final List<Thread> cacheThreads = new ArrayList<>();
    private final Thread dispatcher;

    private State state = State.NEW;
    /** False once stop() began: the dispatch thread makes no further callback. */
    private volatile boolean delivering = true;
    private volatile SyncerStatus status;

    public WatcherSyncer(Datastore datastore, Set<ResourceKind> kinds, SyncerCallbacks callbacks) {
        this(datastore, kinds, callbacks, SyncerOptions.defaults());
    }

    public WatcherSyncer(Datastore datastore, Set<ResourceKind> kinds, SyncerCallbacks callbacks,
                         SyncerOptions options) {
        Objects.requireNonNull(datastore, "datastore");
        Objects.requireNonNull(kinds, "kinds");
        this.callbacks = Objects.requireNonNull(callbacks, "callbacks");
        this.options = Objects.requireNonNull(options, "options");
        if (kinds.isEmpty()) {
            throw new IllegalArgumentException("kinds must name at least one resource kind");
        }
        this.results = new ArrayBlockingQueue<>(options.queueCapacity());
        for (ResourceKind kind : EnumSet.copyOf(kinds)) {
            caches.add(new WatcherCache(datastore, kind, results::put, options));
        }
        this.dispatcher = daemon(this::dispatch, "syncer-dispatch");
    }

    /** Starts the watchers and the dispatch thread. */
    public synchronized void start() {
        if (state != State.NEW) {
            throw new IllegalStateException("syncer already " + (state == State.RUNNING ? "started" : "stopped"));
        }
        state = State.RUNNING;
        // The dispatcher first, so that WAIT_FOR_DATASTORE precedes everything.
        dispatcher.start();
        for (WatcherCache cache : caches) {
            Thread t = daemon(cache::run, "syncer-" + cache.kind().plural());
            cacheThreads.add(t);
            t.start();
        }
    }

    /** Stops every thread; idempotent. See the class comment for the callback guarantee. */
    public void stop() {
        synchronized (this) {
            if (state == State.STOPPED) {
                return;
            }
            boolean wasRunning = state == State.RUNNING;
            state = State.STOPPED;
            delivering = false;
            if (!wasRunning) {
                return;
            }
        }
        for (Thread t : cacheThreads) {
            t.interrupt();
        }
        dispatcher.interrupt();
        if (Thread.currentThread() == dispatcher) {
            // Called from a callback: nothing more is delivered once it returns; the threads end on their own.
            return;
        }
        try {
            for (Thread t : cacheThreads) {
                // A cache stuck in a slow datastore call cannot reach the callbacks any more; don't wait forever.
                t.join(5_000);
                if (t.isAlive()) {
                    LOG.warn("{} did not stop within 5 s", t.getName());
                }
            }
            dispatcher.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        stop();
    }

    /** {@return the last status sent to the callbacks, or null before the first}. */
    public SyncerStatus status() {
        return status;
    }

    private void dispatch() {
        List<Update> pending = new ArrayList<>();
        Set<ResourceKind> synced = EnumSet.noneOf(ResourceKind.class);
        try {
            sendStatus(SyncerStatus.WAIT_FOR_DATASTORE);
            while (delivering) {
                handle(results.take(), pending, synced);
                // Coalesce what is already queued into one callback, up to the batch size.
                CacheResult next;
                while (pending.size() < options.maxBatchSize() && (next = results.poll()) != null) {
                    handle(next, pending, synced);
                }
                flush(pending);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void handle(CacheResult result, List<Update> pending, Set<ResourceKind> synced) {
        // The first word from any kind shows the datastore is there.
        if (status == SyncerStatus.WAIT_FOR_DATASTORE) {
            sendStatus(SyncerStatus.RESYNC_IN_PROGRESS);
        }
        if (result instanceof CacheResult.Updates u) {
            pending.addAll(u.updates());
        } else if (result instanceof CacheResult.Synced s) {
            synced.add(s.kind());
            if (synced.size() == caches.size() && status != SyncerStatus.IN_SYNC) {
                // Every snapshot update goes out before IN_SYNC.
                flush(pending);
                sendStatus(SyncerStatus.IN_SYNC);
            }
        } else {
            throw new IllegalStateException("unexpected cache result " + result);
        }
    }

    /** Sends the pending updates in chunks of at most maxBatchSize and clears the list. */
    private void flush(List<Update> pending) {
        for (int from = 0; from < pending.size(); from += options.maxBatchSize()) {
            List<Update> batch = List.copyOf(pending.subList(from, Math.min(pending.size(), from + options.maxBatchSize())));
            if (!delivering) {
                break;
            }
            try {
                callbacks.onUpdates(batch);
            } catch (RuntimeException e) {
                LOG.error("syncer callback onUpdates threw; continuing with the next batch", e);
            }
        }
        pending.clear();
    }

    private void sendStatus(SyncerStatus next) {
        status = next;
        if (!delivering) {
            return;
        }
        LOG.info("syncer status {}", next);
        try {
            callbacks.onStatusUpdated(next);
        } catch (RuntimeException e) {
            LOG.error("syncer callback onStatusUpdated threw", e);
        }
    }

    private static Thread daemon(Runnable body, String name) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        return t;
    }
}
