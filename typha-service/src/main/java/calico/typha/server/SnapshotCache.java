package calico.typha.server;

import calico.api.model.ResourceKey;
import calico.libcalico.syncer.SyncerCallbacks;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import calico.libcalico.syncer.UpdateType;
import calico.libcalico.typha.KvCodec;
import calico.libcalico.typha.proto.KV;
import calico.libcalico.typha.proto.KVs;
import calico.libcalico.typha.proto.ServerMessage;
import calico.libcalico.typha.proto.SyncStatus;
import calico.libcalico.typha.proto.SyncStatusMsg;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;

/**
 * What one syncer said, kept once for every client of that syncer type: the current state
 * (key → wire KV), a bounded log of recent breadcrumbs, and the latest snapshot. A new client
 * takes {@link #snapshot(Map)} and then reads {@link #after} from the snapshot's sequence; its own
 * state is only a position. Each update is serialised to JSON once, not once per client.
 *
 * <p>The syncer calls in on its one dispatch thread; clients read from many threads. One lock
 * guards everything; every operation under it is O(1) or O(batch), except the snapshot rebuild,
 * which is O(state) and happens at most once per {@code snapshotMaxAgeNanos} (older snapshots
 * are reused while the log still covers their tail).
 */
final class SnapshotCache implements SyncerCallbacks {

    /** Bound on one delta breadcrumb, as Calico's batches. */
    static final int MAX_BREADCRUMB_UPDATES = 1000;
    /** How often a held-back seal looks again whether the fan-out has ended. */
    static final long RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    private final String syncerType;
    private final int maxLogUpdates;
    private final int chunkBytes;
    private final long snapshotMaxAgeNanos;
    private final long coalesceNanos;
    private final EncodedMessages encoded;
    private final ScheduledExecutorService scheduler;
    private final long maxCoalesceNanos;
    private final CopyOnWriteArraySet<Listener> listeners = new CopyOnWriteArraySet<>();

    // Guarded by this.
    private final Map<ResourceKey, KV> state = new LinkedHashMap<>();
    /** Per kind, the highest revision folded into the state: how far each kind's watch has got. */
    private final Map<String, Long> revisions = new HashMap<>();
    private final List<Breadcrumb> log = new ArrayList<>();
    private int logHead;
    private long logUpdates;
    private long sequence;
    private SyncerStatus status = SyncerStatus.WAIT_FOR_DATASTORE;
    private Snapshot snapshot;
    /** Counted for Calico's typha_snapshots_generated / _reused and typha_updates_total. */
    private long snapshotsBuilt;
    private long snapshotsReused;
    private long updatesReceived;
    /** Told the KV count of each sealed breadcrumb (Calico's typha_breadcrumb_size), under the lock. */
    private IntConsumer sealedKvs = n -> { };
    // Updates received but not yet sealed into a breadcrumb (nor applied to state).
    private final List<Update> pendingUpdates = new ArrayList<>();
    private final List<KV> pendingKvs = new ArrayList<>();
    private long pendingSinceNanos;
    private long lastSealNanos = Long.MIN_VALUE / 2;
    private boolean sealScheduled;

    /**
     * @param coalesceNanos    at most one delta breadcrumb per this interval: an update arriving
     *                         sooner after the previous seal waits and is sealed with the others that
     *                         arrive meanwhile, so that under load clients get fewer, larger messages;
     *                         an update after a quiet period goes out at once
     * @param maxCoalesceNanos while the previous breadcrumb is still being handed to clients, the
     *                         next one waits (and grows) up to this long after its first update:
     *                         an overloaded fan-out sends fewer, larger messages instead of queueing
     */
    SnapshotCache(String syncerType, int maxLogUpdates, int chunkBytes, long snapshotMaxAgeNanos, long coalesceNanos,
                  long maxCoalesceNanos, ScheduledExecutorService scheduler, EncodedMessages encoded) {
        this.encoded = encoded;
        if (maxLogUpdates < 1) {
            throw new IllegalArgumentException("maxLogUpdates: must be at least 1, got " + maxLogUpdates);
        }
        this.syncerType = syncerType;
        this.maxLogUpdates = maxLogUpdates;
        this.chunkBytes = chunkBytes;
        this.snapshotMaxAgeNanos = snapshotMaxAgeNanos;
        this.coalesceNanos = coalesceNanos;
        this.maxCoalesceNanos = Math.max(coalesceNanos, maxCoalesceNanos);
        this.scheduler = scheduler;
    }

    String syncerType() {
        return syncerType;
    }

    /** A client stream reading this cache. */
    interface Listener {
        /** Called (outside the lock) after every new breadcrumb. */
        void wake();

        /**
         * {@return whether this client is streaming deltas, can be written to, and has not yet
         * handed breadcrumb {@code sequence} to its stream}: the fan-out of it is still under way
         */
        boolean lagging(long sequence);
    }

    void addListener(Listener l) {
        listeners.add(l);
    }

    void removeListener(Listener l) {
        listeners.remove(l);
    }

    @Override
    public void onStatusUpdated(SyncerStatus s) {
        synchronized (this) {
            sealPending(System.nanoTime());
            status = s;
            append(ServerMessage.newBuilder().setStatus(SyncStatusMsg.newBuilder().setStatus(wire(s))).build(), 0);
        }
        notifyListeners();
    }

    @Override
    public void onUpdates(List<Update> updates) {
        long now = System.nanoTime();
        List<KV> kvs = new ArrayList<>(updates.size());
        for (Update u : updates) {
            kvs.add(KvCodec.toKv(u));
        }
        boolean sealed = false;
        synchronized (this) {
            updatesReceived += updates.size();
            if (pendingKvs.isEmpty()) {
                pendingSinceNanos = now;
            }
            pendingUpdates.addAll(updates);
            pendingKvs.addAll(kvs);
            long due = lastSealNanos + coalesceNanos;
            if (pendingKvs.size() >= MAX_BREADCRUMB_UPDATES || now - due >= 0 && !holdBack(now)) {
                sealed = sealPending(now);
            } else if (!sealScheduled) {
                sealScheduled = true;
                scheduler.schedule(this::sealFromTimer, Math.max(due - now, RECHECK_NANOS), TimeUnit.NANOSECONDS);
            }
        }
        if (sealed) {
            notifyListeners();
        }
    }

    private void sealFromTimer() {
        boolean sealed = false;
        synchronized (this) {
            long now = System.nanoTime();
            sealScheduled = false;
            if (holdBack(now)) {
                sealScheduled = true;
                scheduler.schedule(this::sealFromTimer, RECHECK_NANOS, TimeUnit.NANOSECONDS);
            } else {
                sealed = sealPending(now);
            }
        }
        if (sealed) {
            notifyListeners();
        }
    }

    /**
     * Whether the pending updates should wait for the fan-out of the previous breadcrumb to end:
     * some client is still to be handed it, and the oldest pending update has waited less than
     * the maximum. O(clients), at most once per {@link #RECHECK_NANOS}.
     */
    private boolean holdBack(long now) {
        if (pendingKvs.isEmpty() || now - pendingSinceNanos >= maxCoalesceNanos) {
            return false;
        }
        for (Listener l : listeners) {
            if (l.lagging(sequence)) {
                return true;
            }
        }
        return false;
    }

    /** Applies the pending updates to the state and appends them as one breadcrumb. */
    private boolean sealPending(long now) {
        if (pendingKvs.isEmpty()) {
            return false;
        }
        for (int i = 0; i < pendingUpdates.size(); i++) {
            Update u = pendingUpdates.get(i);
            KV kv = pendingKvs.get(i);
            if (u.type() == UpdateType.DELETED) {
                state.remove(u.key());
            } else {
                state.put(u.key(), kv);
            }
            revisions.merge(kv.getKind(), kv.getRevision(), Math::max);
        }
        sealedKvs.accept(pendingKvs.size());
        KVs msg = KVs.newBuilder().addAllKvs(pendingKvs).setSequence(sequence + 1).build();
        append(ServerMessage.newBuilder().setKvs(msg).build(), pendingKvs.size(), pendingSinceNanos);
        pendingUpdates.clear();
        pendingKvs.clear();
        lastSealNanos = now;
        return true;
    }

    private void append(ServerMessage m, int kvCount) {
        append(m, kvCount, System.nanoTime());
    }

    private void append(ServerMessage m, int kvCount, long createdNanos) {
        sequence++;
        log.add(new Breadcrumb(sequence, new SharedMessage(m, encoded), kvCount, createdNanos));
        logUpdates += kvCount;
        // Keep at least the newest breadcrumb even if it alone exceeds the bound.
        while (logUpdates > maxLogUpdates && log.size() - logHead > 1) {
            Breadcrumb old = log.set(logHead++, null);
            logUpdates -= old.kvCount();
        }
        if (logHead > 1024 && logHead > log.size() / 2) {
            log.subList(0, logHead).clear();
            logHead = 0;
        }
    }

    private void notifyListeners() {
        for (Listener l : listeners) {
            l.wake();
        }
    }

    /**
     * {@return a snapshot whose tail the log still covers, rebuilt when missing, stale or too old,
     * and also when it is older than {@code seen} (per kind, revisions a client already has) while
     * the state is not}: a reused snapshot must not take a client back in time
     */
    synchronized Snapshot snapshot(Map<String, Long> seen) {
        long now = System.nanoTime();
        boolean usable = snapshot != null
                && covered(snapshot.sequence())
                && (snapshot.sequence() == sequence || now - snapshot.createdNanos() < snapshotMaxAgeNanos)
                && (reaches(snapshot.revisions(), seen) || !reaches(revisions, seen));
        if (!usable) {
            snapshot = build(now); // the old one's shared bytes go when its last client is done with it
            snapshotsBuilt++;
        } else {
            snapshotsReused++;
        }
        return snapshot;
    }

    /** {@return whether the state has reached, for every kind, the revision {@code seen} gives} */
    synchronized boolean reached(Map<String, Long> seen) {
        return reaches(revisions, seen);
    }

    /** {@return for the kinds where the state is short of {@code seen}: kind → "have/seen", for logs} */
    synchronized Map<String, String> shortOf(Map<String, Long> seen) {
        Map<String, String> out = new java.util.TreeMap<>();
        seen.forEach((kind, r) -> {
            long have = revisions.getOrDefault(kind, 0L);
            if (have < r) {
                out.put(kind, have + "/" + r);
            }
        });
        return out;
    }

    private static boolean reaches(Map<String, Long> have, Map<String, Long> seen) {
        for (var e : seen.entrySet()) {
            if (have.getOrDefault(e.getKey(), 0L) < e.getValue()) {
                return false;
            }
        }
        return true;
    }

    /** {@return whether the log still holds everything after {@code position}} */
    synchronized boolean covers(long position) {
        return covered(position);
    }

    private boolean covered(long position) {
        long oldest = log.size() > logHead ? log.get(logHead).sequence() : sequence + 1;
        return position + 1 >= oldest;
    }

    private Snapshot build(long now) {
        List<SharedMessage> chunks = new ArrayList<>();
        KVs.Builder chunk = KVs.newBuilder().setSnapshot(true).setSequence(sequence);
        int bytes = 0;
        for (KV kv : state.values()) {
            int size = kv.getSerializedSize();
            if (bytes > 0 && bytes + size > chunkBytes) {
                chunks.add(shared(ServerMessage.newBuilder().setKvs(chunk).build()));
                chunk = KVs.newBuilder().setSnapshot(true).setSequence(sequence);
                bytes = 0;
            }
            chunk.addKvs(kv.getType() == calico.libcalico.typha.proto.UpdateType.NEW ? kv
                    : kv.toBuilder().setType(calico.libcalico.typha.proto.UpdateType.NEW).build());
            bytes += size;
        }
        chunks.add(shared(ServerMessage.newBuilder().setKvs(chunk.setLastSnapshotChunk(true)).build()));
        if (status != SyncerStatus.WAIT_FOR_DATASTORE) {
            chunks.add(shared(ServerMessage.newBuilder().setStatus(SyncStatusMsg.newBuilder().setStatus(wire(status))).build()));
        }
        return new Snapshot(sequence, Map.copyOf(revisions), Collections.unmodifiableList(chunks), state.size(), now);
    }

    private SharedMessage shared(ServerMessage m) {
        return new SharedMessage(m, encoded);
    }

    /**
     * {@return up to {@code max} breadcrumbs after {@code position}, oldest first}; empty when the
     * client is up to date.
     *
     * @throws FellBehindException when the log has dropped breadcrumbs the client has not had
     */
    synchronized List<Breadcrumb> after(long position, int max) throws FellBehindException {
        if (!covered(position)) {
            throw new FellBehindException("client fell too far behind: it is at sequence " + position
                    + ", the delta log starts at " + log.get(logHead).sequence()
                    + " (TYPHA_MAXDELTALOGUPDATES " + maxLogUpdates + ")");
        }
        if (position >= sequence) {
            return List.of();
        }
        int from = logHead + (int) (position + 1 - log.get(logHead).sequence());
        int to = Math.min(log.size(), from + max);
        return new ArrayList<>(log.subList(from, to));
    }

    synchronized long sequence() {
        return sequence;
    }

    synchronized int size() {
        return state.size();
    }

    synchronized long snapshotsBuilt() {
        return snapshotsBuilt;
    }

    synchronized long snapshotsReused() {
        return snapshotsReused;
    }

    synchronized long updatesReceived() {
        return updatesReceived;
    }

    synchronized void onSealed(IntConsumer kvCount) {
        sealedKvs = kvCount;
    }

    /** {@return clients past their hello on this syncer (each listens for new breadcrumbs)} */
    int clientCount() {
        return listeners.size();
    }

    synchronized SyncerStatus status() {
        return status;
    }

    /** {@return seconds since the latest snapshot was built, or 0 when none was} */
    synchronized double snapshotAgeSeconds() {
        return snapshot == null ? 0 : (System.nanoTime() - snapshot.createdNanos()) / 1e9;
    }

    synchronized int latestSnapshotBytes() {
        return snapshot == null ? 0 : snapshot.messages().stream().mapToInt(m -> m.plain().getSerializedSize()).sum();
    }

    static SyncStatus wire(SyncerStatus s) {
        return switch (s) {
            case WAIT_FOR_DATASTORE -> SyncStatus.WAIT_FOR_DATASTORE;
            case RESYNC_IN_PROGRESS -> SyncStatus.RESYNC_IN_PROGRESS;
            case IN_SYNC -> SyncStatus.IN_SYNC;
        };
    }
}
