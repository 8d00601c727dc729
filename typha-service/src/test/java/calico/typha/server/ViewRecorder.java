package calico.typha.server;

import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.libcalico.syncer.SyncerCallbacks;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import calico.libcalico.syncer.UpdateType;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A TyphaClient listener that rebuilds the view and checks the syncer contract on every call:
 * never concurrent, statuses forward and once each, NEW only for unknown keys, UPDATED/DELETED
 * only for known ones, strictly increasing revisions per key. Violations are collected.
 */
final class ViewRecorder implements SyncerCallbacks {

    private final AtomicBoolean inCallback = new AtomicBoolean();
    private final List<SyncerStatus> statuses = new ArrayList<>();
    private final Map<ResourceKey, Resource> view = new HashMap<>();
    private final Map<ResourceKey, Long> revisions = new HashMap<>();
    private final List<Update> updates = new ArrayList<>();
    private final List<String> violations = new ArrayList<>();

    @Override
    public void onStatusUpdated(SyncerStatus status) {
        enter();
        synchronized (this) {
            if (statuses.isEmpty() ? status != SyncerStatus.WAIT_FOR_DATASTORE
                    : status.ordinal() != statuses.get(statuses.size() - 1).ordinal() + 1) {
                violations.add("status " + status + " after " + statuses);
            }
            statuses.add(status);
        }
        inCallback.set(false);
    }

    @Override
    public void onUpdates(List<Update> batch) {
        enter();
        synchronized (this) {
            if (batch.isEmpty()) {
                violations.add("empty batch");
            }
            if (!statuses.contains(SyncerStatus.RESYNC_IN_PROGRESS)) {
                violations.add("updates before RESYNC_IN_PROGRESS");
            }
            for (Update u : batch) {
                boolean known = view.containsKey(u.key());
                if (u.type() == UpdateType.NEW && known) {
                    violations.add("NEW for known " + u.key());
                }
                if (u.type() != UpdateType.NEW && !known) {
                    violations.add(u.type() + " for unknown " + u.key());
                }
                Long last = revisions.get(u.key());
                if (last != null && u.revision() <= last && u.type() != UpdateType.DELETED) {
                    violations.add("revision " + u.revision() + " after " + last + " for " + u.key());
                }
                revisions.put(u.key(), u.revision());
                if (u.type() == UpdateType.DELETED) {
                    view.remove(u.key());
                } else {
                    view.put(u.key(), u.value());
                }
                updates.add(u);
            }
        }
        inCallback.set(false);
    }

    private void enter() {
        if (!inCallback.compareAndSet(false, true)) {
            synchronized (this) {
                violations.add("concurrent callback");
            }
        }
    }

    synchronized Map<ResourceKey, Resource> view() {
        return new HashMap<>(view);
    }

    synchronized List<Update> updates() {
        return new ArrayList<>(updates);
    }

    synchronized List<SyncerStatus> statuses() {
        return new ArrayList<>(statuses);
    }

    synchronized boolean inSync() {
        return statuses.contains(SyncerStatus.IN_SYNC);
    }

    synchronized List<String> violations() {
        return new ArrayList<>(violations);
    }

    synchronized void clearUpdates() {
        updates.clear();
    }
}
