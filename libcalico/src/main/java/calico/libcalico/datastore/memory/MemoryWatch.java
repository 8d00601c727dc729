package calico.libcalico.datastore.memory;

import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.DatastoreException;
import calico.libcalico.datastore.Watch;
import calico.libcalico.datastore.WatchEvent;
import calico.libcalico.datastore.WatchListener;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One watch on the memory datastore. It owns a delivery thread that follows the shared history
 * log from a cursor (the last revision it has examined), like an etcd watcher catching up from
 * the store: writers only wake it, so a slow listener never blocks a writer, and a watch that
 * falls behind a compaction ends with {@link WatchEvent.Compacted}.
 */
final class MemoryWatch implements Watch {

    private static final Logger LOG = LoggerFactory.getLogger(MemoryWatch.class);

    /** Upper bound on revisions read from the log under the store's lock in one step. */
    private static final int READ_BATCH = 512;

    private final MemoryDatastore store;
    private final ResourceKind kind;
    private final String namespace;
    private final WatchListener listener;
    private final Thread thread;

    /** Held while the listener runs, so that close() can wait for a callback in progress. */
    private final ReentrantLock deliveryLock = new ReentrantLock();
    private final Object signal = new Object();
    /** Guarded by {@code signal}: something may have changed since the thread last looked. */
    private boolean signalled = true;

    private volatile boolean closed;
    /** Revision a bookmark was requested at, or 0; the bookmark is sent once the cursor reaches it. */
    private final AtomicLong bookmarkAt = new AtomicLong();
    /** Set to end the watch with {@link WatchEvent.Failed} (simulated loss of the backend). */
    private volatile DatastoreException failure;

    /** Last revision examined; only the delivery thread touches it after start. */
    private long cursor;
    /** Revision up to which the log has been read for this watch; written and read under the store's lock. */
    private long scanned;
    /** Set by the store when it trimmed a change this watch wanted before reading it. */
    private volatile boolean lost;

    MemoryWatch(MemoryDatastore store, long id, ResourceKind kind, String namespace, long cursor,
                WatchListener listener) {
        this.store = store;
        this.kind = kind;
        this.namespace = namespace;
        this.cursor = cursor;
        this.scanned = cursor;
        this.listener = listener;
        this.thread = new Thread(this::run, "memory-watch-" + id + "-" + kind.plural());
        this.thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    boolean matches(ResourceKey key) {
        return key.kind() == kind && (namespace == null || namespace.equals(key.namespace()));
    }

    long scanned() {
        return scanned;
    }

    void scanned(long revision) {
        scanned = revision;
    }

    boolean lost() {
        return lost;
    }

    /** Marks that a change this watch wants was dropped from the history before it was read. */
    void lose() {
        lost = true;
        wake();
    }

    /** Tells the delivery thread to look at the log again. Never blocks for long: writers call it. */
    void wake() {
        synchronized (signal) {
            signalled = true;
            signal.notifyAll();
        }
    }

    void requestBookmark(long revision) {
        bookmarkAt.accumulateAndGet(revision, Math::max);
        wake();
    }

    /** Ends the watch with {@link WatchEvent.Failed} as soon as the current callback returns. */
    void fail(DatastoreException error) {
        if (failure == null) {
            failure = error;
        }
        wake();
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public void close() {
        closed = true;
        wake();
        if (!deliveryLock.isHeldByCurrentThread()) {
            // Wait for a callback in progress, so nothing is delivered once close() returns.
            deliveryLock.lock();
            deliveryLock.unlock();
        }
        store.forget(this);
    }

    /** Waits for the delivery thread to finish (after close); for an orderly datastore shutdown. */
    void join(long millis) throws InterruptedException {
        if (Thread.currentThread() != thread) {
            thread.join(millis);
        }
    }

    private void run() {
        try {
            while (!closed) {
                synchronized (signal) {
                    while (!signalled && !closed) {
                        signal.wait();
                    }
                    signalled = false;
                }
                drain();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            closed = true;
            store.forget(this);
        }
    }

    /** Delivers everything the log holds after the cursor, then any bookmark that is due. */
    private void drain() {
        while (!closed) {
            DatastoreException error = failure;
            if (error != null) {
                end(new WatchEvent.Failed(error, cursor));
                return;
            }
            HistoryRead read = store.readAfter(this, cursor, READ_BATCH);
            if (read instanceof HistoryRead.Gone gone) {
                end(new WatchEvent.Compacted(gone.compactRevision(), gone.currentRevision()));
                return;
            }
            HistoryRead.Events events = (HistoryRead.Events) read;
            for (WatchEvent event : events.events()) {
                if (!deliver(event)) {
                    return;
                }
            }
            cursor = events.scannedTo();
            long wanted = bookmarkAt.get();
            if (wanted > 0 && cursor >= wanted && bookmarkAt.compareAndSet(wanted, 0)) {
                deliver(new WatchEvent.Bookmark(cursor));
            }
            if (!events.more()) {
                return;
            }
        }
    }

    private void end(WatchEvent last) {
        deliver(last);
        closed = true;
    }

    private boolean deliver(WatchEvent event) {
        deliveryLock.lock();
        try {
            if (closed) {
                return false;
            }
            listener.onEvent(event);
        } catch (RuntimeException e) {
            // A listener bug must not kill the watch for the events after it.
            LOG.warn("watch listener for {} threw on {}", kind.kind(), event, e);
        } finally {
            deliveryLock.unlock();
        }
        return true;
    }
}
