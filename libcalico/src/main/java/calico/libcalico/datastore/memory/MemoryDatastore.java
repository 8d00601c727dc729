package calico.libcalico.datastore.memory;

import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.selector.Selector;
import calico.api.validation.FieldError;
import calico.api.validation.ResourceValidator;
import calico.api.validation.ValidationException;
import calico.libcalico.datastore.Admission;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreException;
import calico.libcalico.datastore.ListResult;
import calico.libcalico.datastore.Watch;
import calico.libcalico.datastore.WatchEvent;
import calico.libcalico.datastore.WatchListener;
import java.time.Clock;
import java.time.Duration;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The {@code memory} backend: an in-process {@link Datastore} with the semantics of the etcd
 * backend, for unit tests and the zero-dependency quick start.
 *
 * <ul>
 *   <li>One global revision, starting at 1 for an empty store (as etcd) and incremented by every
 *       successful write; {@code metadata.resourceVersion} is the revision of the resource's last
 *       write, in decimal. Because the store starts at 1, a list never reports revision 0, which
 *       {@link #watch} would read as "from now".</li>
 *   <li>Every write keeps a {@link Change} in a history log. The log is bounded by
 *       {@link Settings#historyLimit()} (the oldest entries are compacted away) and can be
 *       compacted explicitly with {@link #compact(long)}; a watch that needs a compacted revision
 *       ends with {@link WatchEvent.Compacted}.</li>
 *   <li>Each watch has its own delivery thread that follows the log, so writers never wait for
 *       listeners. Bookmarks are sent on {@link #requestProgress()} and, when
 *       {@link Settings#bookmarkInterval()} is positive, periodically.</li>
 *   <li>{@link #failWatches()} and {@link #setAvailable(boolean)} inject the failures a real
 *       backend has (a broken watch stream, an unreachable server), for tests of consumers.</li>
 * </ul>
 */
public final class MemoryDatastore implements Datastore {

    /** The revision of an empty store, as in etcd. */
    public static final long INITIAL_REVISION = 1;

    private static final Comparator<ResourceKey> BY_NAMESPACE_THEN_NAME = Comparator
            .comparing(ResourceKey::namespace, Comparator.nullsFirst(Comparator.naturalOrder()))
            .thenComparing(ResourceKey::name);
    private static final DateTimeFormatter TIMESTAMP = DateTimeFormatter.ISO_INSTANT;

    /**
     * Tuning of the memory backend.
     *
     * @param clock            stamps {@code metadata.creationTimestamp}
     * @param historyLimit     writes kept in the history log; older ones are compacted away
     * @param bookmarkInterval period of automatic bookmarks to every watch; zero for none
     */
    public record Settings(Clock clock, int historyLimit, Duration bookmarkInterval) {
        public Settings {
            Objects.requireNonNull(clock, "clock");
            Objects.requireNonNull(bookmarkInterval, "bookmarkInterval");
            if (historyLimit < 1) {
                throw new IllegalArgumentException("historyLimit must be at least 1, got " + historyLimit);
            }
            if (bookmarkInterval.isNegative()) {
                throw new IllegalArgumentException("bookmarkInterval must not be negative, got " + bookmarkInterval);
            }
        }

        public static Settings defaults() {
            return new Settings(Clock.systemUTC(), 100_000, Duration.ZERO);
        }

        public Settings withClock(Clock newClock) {
            return new Settings(newClock, historyLimit, bookmarkInterval);
        }

        public Settings withHistoryLimit(int newLimit) {
            return new Settings(clock, newLimit, bookmarkInterval);
        }

        public Settings withBookmarkInterval(Duration newInterval) {
            return new Settings(clock, historyLimit, newInterval);
        }
    }

    private final Settings settings;
    private final Admission admission = new Admission(ResourceValidator.get());

    /** Guards the resources, the history log and the revision counters. */
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private final Map<ResourceKind, NavigableMap<ResourceKey, Resource>> resources = new EnumMap<>(ResourceKind.class);
    /** Every write with revision >= {@link #compactRevision}, keyed by revision. */
    private final NavigableMap<Long, Change> history = new TreeMap<>();
    /** Volatile so that watch threads can check for work without the lock; written under it. */
    private volatile long revision = INITIAL_REVISION;
    /** Revisions below this have left the history log; 0 while nothing has been compacted. */
    private long compactRevision;

    private final Set<MemoryWatch> watches = ConcurrentHashMap.newKeySet();
    private final AtomicLong watchIds = new AtomicLong();
    private final ScheduledExecutorService bookmarkTimer;
    private volatile boolean available = true;
    private volatile boolean closed;

    public MemoryDatastore() {
        this(Settings.defaults());
    }

    public MemoryDatastore(Settings settings) {
        this.settings = Objects.requireNonNull(settings, "settings");
        for (ResourceKind kind : ResourceKind.values()) {
            resources.put(kind, new TreeMap<>(BY_NAMESPACE_THEN_NAME));
        }
        if (settings.bookmarkInterval().isZero()) {
            bookmarkTimer = null;
        } else {
            bookmarkTimer = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "memory-datastore-bookmarks");
                t.setDaemon(true);
                return t;
            });
            long period = settings.bookmarkInterval().toNanos();
            bookmarkTimer.scheduleAtFixedRate(this::requestProgress, period, period, TimeUnit.NANOSECONDS);
        }
    }

    // ---- reads -------------------------------------------------------------------------------

    @Override
    public Optional<Resource> get(ResourceKey key) {
        Objects.requireNonNull(key, "key");
        checkUsable();
        lock.readLock().lock();
        try {
            return Optional.ofNullable(resources.get(key.kind()).get(key));
        } finally {
            lock.readLock().unlock();
        }
    }

    @Override
    public ListResult list(ResourceKind kind, String namespace, String labelSelector) {
        Objects.requireNonNull(kind, "kind");
        Selector selector = Admission.labelSelector(kind, labelSelector);
        String ns = kind.namespaced() ? namespace : null;
        checkUsable();
        lock.readLock().lock();
        try {
            List<Resource> items = matching(resources.get(kind).values(), ns, selector);
            return new ListResult(items, revision);
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * Rolls the kind's current state back through the history log. Possible while every change
     * after {@code revision} is still in the log, which is the rule a watch from {@code revision}
     * follows too.
     */
    @Override
    public ListResult listAt(ResourceKind kind, String namespace, String labelSelector, long revision) {
        Objects.requireNonNull(kind, "kind");
        Selector selector = Admission.labelSelector(kind, labelSelector);
        String ns = kind.namespaced() ? namespace : null;
        checkUsable();
        lock.readLock().lock();
        try {
            if (revision <= 0 || revision > this.revision) {
                throw new IllegalArgumentException("revision: must be between 1 and the current revision "
                        + this.revision + ", got " + revision);
            }
            if (revision + 1 < compactRevision) {
                throw new DatastoreException.Compacted(revision, compactRevision);
            }
            NavigableMap<ResourceKey, Resource> then = new TreeMap<>(resources.get(kind));
            for (Change c : history.tailMap(revision, false).descendingMap().values()) {
                if (c.key().kind() != kind) {
                    continue;
                }
                if (c.previous() == null) {
                    then.remove(c.key());
                } else {
                    then.put(c.key(), c.previous());
                }
            }
            List<Resource> items = matching(then.values(), ns, selector);
            return new ListResult(items, revision);
        } finally {
            lock.readLock().unlock();
        }
    }

    @Override
    public long currentRevision() {
        checkUsable();
        return revision;
    }

    // ---- writes ------------------------------------------------------------------------------

    @Override
    public Resource create(Resource resource) {
        Resource candidate = admission.forCreate(resource, kind -> list(kind).items());
        ResourceKey key = candidate.key();
        checkUsable();
        lock.writeLock().lock();
        try {
            NavigableMap<ResourceKey, Resource> ofKind = resources.get(key.kind());
            if (ofKind.containsKey(key)) {
                throw new DatastoreException.AlreadyExists(key);
            }
            String now = TIMESTAMP.format(settings.clock().instant().truncatedTo(ChronoUnit.SECONDS));
            return store(ofKind, candidate, UUID.randomUUID().toString(), now, null);
        } finally {
            lock.writeLock().unlock();
        }
    }

    @Override
    public Resource update(Resource resource) {
        Resource candidate = admission.forUpdate(resource);
        ResourceKey key = candidate.key();
        Long expected = Admission.revisionOf(candidate.key(), candidate.metadata().resourceVersion());
        checkUsable();
        lock.writeLock().lock();
        try {
            NavigableMap<ResourceKey, Resource> ofKind = resources.get(key.kind());
            Resource current = ofKind.get(key);
            if (current == null) {
                throw new DatastoreException.NotFound(key);
            }
            checkVersion(key, expected, current);
            admission.checkImmutable(current, candidate);
            // uid and creationTimestamp belong to the stored object, whatever the caller sent.
            return store(ofKind, candidate, current.metadata().uid(), current.metadata().creationTimestamp(), current);
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** Writes {@code candidate} at the next revision with the given identity; caller holds the write lock. */
    private Resource store(NavigableMap<ResourceKey, Resource> ofKind, Resource candidate, String uid,
                           String creationTimestamp, Resource previous) {
        long rev = revision + 1;
        Resource stored = candidate.withMetadata(candidate.metadata()
                .withCreation(uid, creationTimestamp)
                .withResourceVersion(Long.toString(rev)));
        ofKind.put(stored.key(), stored);
        record(new Change(rev, stored.key(), stored, previous));
        return stored;
    }

    @Override
    public Resource delete(ResourceKey key, String resourceVersion) {
        Objects.requireNonNull(key, "key");
        Long expected = Admission.revisionOf(key, resourceVersion);
        checkUsable();
        lock.writeLock().lock();
        try {
            NavigableMap<ResourceKey, Resource> ofKind = resources.get(key.kind());
            Resource current = ofKind.get(key);
            if (current == null) {
                throw new DatastoreException.NotFound(key);
            }
            checkVersion(key, expected, current);
            ofKind.remove(key);
            record(new Change(revision + 1, key, null, current));
            return current;
        } finally {
            lock.writeLock().unlock();
        }
    }

    // ---- watches -----------------------------------------------------------------------------

    @Override
    public Watch watch(ResourceKind kind, String namespace, long fromRevision, WatchListener listener) {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(listener, "listener");
        if (fromRevision < 0) {
            throw new IllegalArgumentException("fromRevision must be 0 (from now) or a revision, got " + fromRevision);
        }
        checkOpen();
        String ns = kind.namespaced() ? namespace : null;
        MemoryWatch watch;
        lock.readLock().lock();
        try {
            long cursor = fromRevision == 0 ? revision : fromRevision;
            watch = new MemoryWatch(this, watchIds.incrementAndGet(), kind, ns, cursor, listener);
            if (cursor + 1 < compactRevision) {
                watch.lose(); // what it asks for is gone already, as etcd answers an old start revision
            }
            watches.add(watch);
        } finally {
            lock.readLock().unlock();
        }
        if (!available) {
            // As a remote backend: the call returns, then the stream reports it could not connect.
            watch.fail(unavailable("memory datastore is unavailable (simulated)"));
        }
        watch.start();
        return watch;
    }

    /**
     * Sends a {@link WatchEvent.Bookmark} to every open watch once it has delivered every change
     * up to the current revision (etcd's progress request).
     */
    public void requestProgress() {
        long rev = revision;
        for (MemoryWatch w : watches) {
            w.requestBookmark(rev);
        }
    }

    /**
     * Drops the history before {@code revision}, as etcd's compaction: afterwards a watch that
     * needs an older event ends with {@link WatchEvent.Compacted}. Compacting at or below the
     * current compaction point does nothing.
     *
     * @throws IllegalArgumentException if {@code revision} is in the future
     */
    public void compact(long revision) {
        lock.writeLock().lock();
        try {
            if (revision > this.revision) {
                throw new IllegalArgumentException(
                        "cannot compact at revision " + revision + ": current revision is " + this.revision);
            }
            if (revision > compactRevision) {
                trimTo(revision);
            }
        } finally {
            lock.writeLock().unlock();
        }
        wakeAll();
    }

    /** {@return the oldest revision still in the history log's range; 0 if never compacted}. */
    public long compactRevision() {
        lock.readLock().lock();
        try {
            return compactRevision;
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * Fault injection: ends every open watch with {@link WatchEvent.Failed} carrying
     * {@link DatastoreException.Unavailable}, as when a watch stream to a server breaks.
     */
    public void failWatches() {
        for (MemoryWatch w : watches) {
            w.fail(unavailable("memory datastore watch stream broken (simulated)"));
        }
    }

    /**
     * Fault injection: while unavailable, every call throws {@link DatastoreException.Unavailable}
     * and every watch (open or new) ends with {@link WatchEvent.Failed}. The data is kept.
     */
    public void setAvailable(boolean available) {
        this.available = available;
        if (!available) {
            for (MemoryWatch w : watches) {
                w.fail(unavailable("memory datastore is unavailable (simulated)"));
            }
        }
    }

    /** Closes every watch (waiting for callbacks in progress) and stops the bookmark timer. */
    @Override
    public void close() {
        closed = true;
        if (bookmarkTimer != null) {
            bookmarkTimer.shutdownNow();
        }
        List<MemoryWatch> open = new ArrayList<>(watches);
        for (MemoryWatch w : open) {
            w.close();
        }
        try {
            for (MemoryWatch w : open) {
                w.join(1_000);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ---- for MemoryWatch ---------------------------------------------------------------------

    /** Reads the watch's events after {@code cursor}, at most {@code limit} revisions of them. */
    HistoryRead readAfter(MemoryWatch watch, long cursor, int limit) {
        lock.readLock().lock();
        try {
            long current = revision;
            if (cursor >= current) {
                return new HistoryRead.Events(List.of(), cursor, false);
            }
            if (watch.lost()) {
                return new HistoryRead.Gone(compactRevision, current);
            }
            // Nothing this watch wants was trimmed (trimTo would have said so): skip what was.
            long from = Math.max(cursor, compactRevision - 1);
            long upTo = Math.min(current, from + limit);
            List<WatchEvent> events = new ArrayList<>();
            for (Change c : history.subMap(from, false, upTo, true).values()) {
                if (watch.matches(c.key())) {
                    events.add(c.toEvent());
                }
            }
            watch.scanned(upTo); // under the lock: trimTo sees exactly what the watch has in hand
            return new HistoryRead.Events(events, upTo, upTo < current);
        } finally {
            lock.readLock().unlock();
        }
    }

    void forget(MemoryWatch watch) {
        watches.remove(watch);
    }

    // ---- helpers -----------------------------------------------------------------------------

    private static List<Resource> matching(Iterable<Resource> all, String ns, Selector selector) {
        List<Resource> items = new ArrayList<>();
        for (Resource r : all) {
            if ((ns == null || ns.equals(r.metadata().namespace())) && selector.matches(r.metadata().labels())) {
                items.add(r);
            }
        }
        return items;
    }

    /** Appends to the history (under the write lock), trims it to the limit and wakes watchers. */
    private void record(Change change) {
        history.put(change.revision(), change);
        revision = change.revision();
        if (history.size() > settings.historyLimit()) {
            trimTo(Math.max(compactRevision, revision - settings.historyLimit() + 1));
        }
        // Wake only the watches this change is for: waking every watch (a thread hand-off each, per
        // write) cost more than the deliveries. An idle watch is safe: trimming ends only a watch
        // that had not yet read a change it wants.
        for (MemoryWatch w : watches) {
            if (w.matches(change.key())) {
                w.wake();
            }
        }
    }

    /**
     * Drops the history before {@code newCompactRevision} (under the write lock). A watch that
     * has not read a dropped change it wants is lost (it ends with Compacted, as an etcd watcher
     * behind a compaction); the others, caught up or merely idle, go on, as etcd's synced watchers.
     */
    private void trimTo(long newCompactRevision) {
        var dropped = history.headMap(newCompactRevision, false);
        for (Change c : dropped.values()) {
            for (MemoryWatch w : watches) {
                if (c.revision() > w.scanned() && w.matches(c.key())) {
                    w.lose();
                }
            }
        }
        dropped.clear();
        compactRevision = newCompactRevision;
    }

    private void wakeAll() {
        for (MemoryWatch w : watches) {
            w.wake();
        }
    }

    private static void checkVersion(ResourceKey key, Long expected, Resource current) {
        String actual = current.metadata().resourceVersion();
        if (expected != null && expected != Long.parseLong(actual)) {
            throw new DatastoreException.Conflict(key, Long.toString(expected), actual);
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("memory datastore is closed");
        }
    }

    private void checkUsable() {
        checkOpen();
        if (!available) {
            throw unavailable("memory datastore is unavailable (simulated)");
        }
    }

    private static DatastoreException.Unavailable unavailable(String message) {
        return new DatastoreException.Unavailable(message, null);
    }
}
