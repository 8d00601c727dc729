package calico.libcalico.syncer;

import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreException;
import calico.libcalico.datastore.ListResult;
import calico.libcalico.datastore.Watch;
import calico.libcalico.datastore.WatchEvent;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one kind in sync: list, then watch from the list's revision; on a broken watch resume
 * from the last revision processed; when that revision is compacted (or watches keep breaking
 * without progress) list again and report only the differences against what was already
 * reported. Runs on its own thread ({@link #run()}) until interrupted.
 *
 * <p>The cache remembers, per key, the revision it last reported. That map is exactly the
 * listener's view of this kind, which is what makes a resync a diff: a listed resource at the
 * remembered revision is skipped, at another revision is {@code UPDATED}, unknown is
 * {@code NEW}; a remembered key missing from the list is {@code DELETED}.
 */
final class WatcherCache {

    private static final Logger LOG = LoggerFactory.getLogger(WatcherCache.class);

    /** Where results go; blocks when the dispatch thread is behind. */
    @FunctionalInterface
    interface Sink {
        void put(CacheResult result) throws InterruptedException;
    }

    /** A watch event tagged with the watch it came from, so that a replaced watch's leftovers are ignored. */
    private record Received(long watchId, WatchEvent event) {
    }

    private final Datastore datastore;
    private final ResourceKind kind;
    private final Sink sink;
    private final SyncerOptions options;
    private final Backoff backoff;

    /** Events from the current watch; unbounded so that the datastore's delivery thread never blocks. */
    private final BlockingQueue<Received> inbox = new LinkedBlockingQueue<>();
    /** Revision last reported per key: the listener's view of this kind. */
    private final Map<ResourceKey, Long> reported = new HashMap<>();
    /** Every change up to this revision has been processed; 0 means "list first". */
    private long revision;
    private boolean synced;
    private int errorsAtRevision;
    private long watchId;
    private Watch watch;

    WatcherCache(Datastore datastore, ResourceKind kind, Sink sink, SyncerOptions options) {
        this.datastore = datastore;
        this.kind = kind;
        this.sink = sink;
        this.options = options;
        this.backoff = new Backoff(options.initialRetryDelay(), options.maxRetryDelay());
    }

    ResourceKind kind() {
        return kind;
    }

    /** Syncs until the thread is interrupted. */
    void run() {
        try {
            while (!Thread.currentThread().isInterrupted()) {
                try {
                    step();
                } catch (RuntimeException e) {
                    // A bug or a backend surprise must not silently end this kind's sync: start over.
                    LOG.error("{}: unexpected failure; listing again", kind.kind(), e);
                    closeWatch();
                    revision = 0;
                }
                options.sleeper().sleep(backoff.next());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            closeWatch();
        }
    }

    /** One round: list if needed, then watch until the watch ends. The caller waits before the next round. */
    private void step() throws InterruptedException {
        if (revision == 0 && !resync()) {
            return;
        }
        if (!openWatch()) {
            return;
        }
        WatchEvent end = follow();
        closeWatch();
        if (end instanceof WatchEvent.Compacted c) {
            LOG.info("{}: watch from revision {} compacted (at {}); listing again", kind.kind(), revision,
                    c.compactRevision());
            revision = 0;
        } else if (end instanceof WatchEvent.Failed f) {
            watchError("watch broke", f.error());
        }
    }

    /** Lists the kind and reports the differences against what was reported; false if the list failed. */
    private boolean resync() throws InterruptedException {
        ListResult list;
        try {
            list = datastore.list(kind);
        } catch (RuntimeException e) {
            LOG.info("{}: list failed, will retry: {}", kind.kind(), e.toString());
            return false;
        }
        List<Update> updates = new ArrayList<>();
        Set<ResourceKey> listed = new HashSet<>();
        for (Resource r : list.items()) {
            listed.add(r.key());
            upsert(r, revisionOf(r, list.revision()), updates);
        }
        for (Iterator<ResourceKey> it = reported.keySet().iterator(); it.hasNext(); ) {
            ResourceKey key = it.next();
            if (!listed.contains(key)) {
                updates.add(Update.deleted(key, list.revision()));
                it.remove();
            }
        }
        if (!updates.isEmpty()) {
            sink.put(new CacheResult.Updates(updates));
        }
        if (!synced) {
            synced = true;
            sink.put(new CacheResult.Synced(kind));
        }
        revision = list.revision();
        errorsAtRevision = 0;
        return true;
    }

    private boolean openWatch() {
        long id = ++watchId;
        try {
            watch = datastore.watch(kind, null, revision, e -> inbox.add(new Received(id, e)));
            return true;
        } catch (DatastoreException.Compacted e) {
            // The contract reports this as a WatchEvent, but a backend that throws it means the same.
            LOG.info("{}: revision {} compacted; listing again", kind.kind(), revision);
            revision = 0;
            return false;
        } catch (RuntimeException e) {
            watchError("watch could not start", e);
            return false;
        }
    }

    /** Applies the current watch's events until it ends; returns the event that ended it. */
    private WatchEvent follow() throws InterruptedException {
        List<Update> updates = new ArrayList<>();
        while (true) {
            Received next = inbox.take();
            // Take whatever else is already queued, so that a burst becomes one result.
            do {
                if (next.watchId() != watchId) {
                    continue;
                }
                WatchEvent event = next.event();
                if (event instanceof WatchEvent.Compacted || event instanceof WatchEvent.Failed) {
                    flush(updates);
                    return event;
                }
                apply(event, updates);
                revision = Math.max(revision, event.revision());
                errorsAtRevision = 0;
                backoff.reset();
            } while (updates.size() < options.maxBatchSize() && (next = inbox.poll()) != null);
            flush(updates);
        }
    }

    private void apply(WatchEvent event, List<Update> updates) {
        if (event instanceof WatchEvent.Added a) {
            upsert(a.resource(), a.revision(), updates);
        } else if (event instanceof WatchEvent.Modified m) {
            upsert(m.resource(), m.revision(), updates);
        } else if (event instanceof WatchEvent.Deleted d) {
            if (reported.remove(d.key()) != null) {
                updates.add(Update.deleted(d.key(), d.revision()));
            }
        } else if (!(event instanceof WatchEvent.Bookmark)) {
            throw new IllegalStateException("unexpected watch event " + event);
        }
    }

    /** Reports a present resource unless the listener already has it at this revision. */
    private void upsert(Resource r, long rev, List<Update> updates) {
        Long known = reported.put(r.key(), rev);
        if (known == null) {
            updates.add(Update.of(UpdateType.NEW, r, rev));
        } else if (known != rev) {
            updates.add(Update.of(UpdateType.UPDATED, r, rev));
        }
    }

    private void flush(List<Update> updates) throws InterruptedException {
        if (!updates.isEmpty()) {
            sink.put(new CacheResult.Updates(updates));
            updates.clear();
        }
    }

    /** Counts a watch failure; too many without progress and the next round lists again. */
    private void watchError(String what, RuntimeException error) {
        errorsAtRevision++;
        if (errorsAtRevision > options.maxWatchErrorsPerRevision()) {
            LOG.warn("{}: {} {} times at revision {}; listing again: {}", kind.kind(), what, errorsAtRevision,
                    revision, error.toString());
            revision = 0;
            errorsAtRevision = 0;
        } else {
            LOG.info("{}: {}, resuming from revision {}: {}", kind.kind(), what, revision, error.toString());
        }
    }

    private void closeWatch() {
        if (watch != null) {
            watch.close();
            watch = null;
        }
        watchId++;
        inbox.clear();
    }

    private static long revisionOf(Resource r, long fallback) {
        String rv = r.metadata().resourceVersion();
        try {
            return rv == null ? fallback : Long.parseLong(rv);
        } catch (NumberFormatException e) {
            return fallback;
        }
    }
}
