package calico.libcalico.syncer;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.testing.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

/**
 * A syncer listener that rebuilds the listener's view from the updates and checks the protocol
 * on every callback: never concurrent, always the same thread, statuses in order and once each,
 * NEW only for unknown keys, UPDATED/DELETED only for known ones, and per key strictly increasing
 * revisions (so nothing is duplicated or reordered). Violations are collected, not thrown, since
 * the syncer would only log an exception.
 */
final class RecordingCallbacks implements SyncerCallbacks {

    /** One thing the listener was told, in order. */
    sealed interface Entry {
    }

    record StatusEntry(SyncerStatus status) implements Entry {
    }

    record UpdateEntry(Update update, int batch) implements Entry {
    }

    private final AtomicBoolean inCallback = new AtomicBoolean();
    final Set<String> threads = ConcurrentHashMap.newKeySet();
    private final List<Entry> log = new ArrayList<>();
    private final List<SyncerStatus> statuses = new ArrayList<>();
    private final List<Integer> batchSizes = new ArrayList<>();
    private final Map<ResourceKey, Resource> view = new HashMap<>();
    private final Map<ResourceKey, Long> lastRevision = new HashMap<>();
    private final List<String> violations = new ArrayList<>();

    @Override
    public void onStatusUpdated(SyncerStatus status) {
        enter();
        try {
            synchronized (this) {
                if (!statuses.isEmpty() && status.ordinal() != statuses.get(statuses.size() - 1).ordinal() + 1) {
                    violations.add("status " + status + " after " + statuses);
                }
                if (statuses.isEmpty() && status != SyncerStatus.WAIT_FOR_DATASTORE) {
                    violations.add("first status " + status);
                }
                statuses.add(status);
                log.add(new StatusEntry(status));
                notifyAll();
            }
        } finally {
            leave();
        }
    }

    @Override
    public void onUpdates(List<Update> updates) {
        enter();
        try {
            synchronized (this) {
                if (updates.isEmpty()) {
                    violations.add("empty batch");
                }
                if (statuses.isEmpty() || statuses.get(statuses.size() - 1) == SyncerStatus.WAIT_FOR_DATASTORE) {
                    violations.add("updates before RESYNC_IN_PROGRESS");
                }
                batchSizes.add(updates.size());
                for (Update u : updates) {
                    check(u);
                    log.add(new UpdateEntry(u, batchSizes.size()));
                }
                notifyAll();
            }
        } finally {
            leave();
        }
    }

    private void check(Update u) {
        Long last = lastRevision.get(u.key());
        if (last != null && u.revision() <= last) {
            violations.add(u.type() + " " + u.key() + " at revision " + u.revision() + " after " + last);
        }
        lastRevision.put(u.key(), u.revision());
        boolean known = view.containsKey(u.key());
        switch (u.type()) {
            case NEW -> {
                if (known) {
                    violations.add("NEW for known " + u.key() + " at " + u.revision());
                }
                view.put(u.key(), u.value());
            }
            case UPDATED -> {
                if (!known) {
                    violations.add("UPDATED for unknown " + u.key() + " at " + u.revision());
                }
                view.put(u.key(), u.value());
            }
            case DELETED -> {
                if (!known) {
                    violations.add("DELETED for unknown " + u.key() + " at " + u.revision());
                }
                view.remove(u.key());
            }
        }
    }

    private void enter() {
        threads.add(Thread.currentThread().getName());
        if (!inCallback.compareAndSet(false, true)) {
            synchronized (this) {
                violations.add("concurrent callback on " + Thread.currentThread().getName());
            }
        }
    }

    private void leave() {
        inCallback.set(false);
    }

    synchronized List<Entry> log() {
        return List.copyOf(log);
    }

    synchronized List<SyncerStatus> statuses() {
        return List.copyOf(statuses);
    }

    synchronized List<Integer> batchSizes() {
        return List.copyOf(batchSizes);
    }

    synchronized List<String> violations() {
        return List.copyOf(violations);
    }

    synchronized Map<ResourceKey, Resource> view() {
        return Map.copyOf(view);
    }

    /** {@return the updates received after the first {@code from} log entries}. */
    synchronized List<Update> updatesAfter(int from) {
        return log.subList(from, log.size()).stream()
                .filter(UpdateEntry.class::isInstance).map(e -> ((UpdateEntry) e).update()).toList();
    }

    synchronized int size() {
        return log.size();
    }

    synchronized void awaitStatus(SyncerStatus status) throws InterruptedException {
        await(() -> statuses.contains(status), "status " + status + " (got " + statuses + ")");
    }

    /** Waits until {@code n} more entries than {@code from} have been received. */
    synchronized void awaitEntries(int from, int n) throws InterruptedException {
        await(() -> log.size() >= from + n, (from + n) + " log entries (got " + log.size() + ": " + log + ")");
    }

    /** Waits until the view equals what the datastore holds for {@code kinds}. */
    void awaitConverged(Datastore ds, ResourceKind... kinds) {
        try {
            Await.until("listener view converged to the datastore", Duration.ofSeconds(20),
                    () -> view().equals(snapshot(ds, kinds)));
        } catch (AssertionError e) {
            assertThat(view()).as("listener view converged to the datastore").isEqualTo(snapshot(ds, kinds));
            throw e;
        }
    }

    static Map<ResourceKey, Resource> snapshot(Datastore ds, ResourceKind... kinds) {
        Map<ResourceKey, Resource> out = new HashMap<>();
        for (ResourceKind k : kinds) {
            for (Resource r : ds.list(k).items()) {
                out.put(r.key(), r);
            }
        }
        return out;
    }

    private void await(BooleanSupplier done, String what) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!done.getAsBoolean()) {
            long left = deadline - System.nanoTime();
            assertThat(left).as("waiting for " + what).isPositive();
            wait(Math.max(1, left / 1_000_000));
        }
    }

    /** Asserts the protocol held throughout. */
    void assertClean() {
        assertThat(violations()).as("protocol violations").isEmpty();
        assertThat(threads).as("callback threads").hasSize(1);
    }
}
