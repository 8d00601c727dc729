package calico.felix.app;

import calico.api.model.ClusterInformation;
import calico.libcalico.syncer.SyncerCallbacks;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import java.util.ArrayList;
import java.util.List;

/**
 * Holds back a syncer stream until ClusterInformation {@code default} has
 * {@code spec.datastoreReady: true}, then replays what it held, in order, and passes everything
 * through from then on. Felix reading through typha has no datastore connection of its own, so
 * this is how it waits for the datastore the way the direct path's start-up poll does: nothing
 * reaches the calculation graph (or the dataplane) before the datastore is declared ready. As on
 * the direct path the check is made once, at start: a later {@code datastoreReady: false} is an
 * ordinary update.
 *
 * <p>Called from one thread (the typha client's dispatch thread), as {@link SyncerCallbacks} are.
 */
final class DatastoreReadyGate implements SyncerCallbacks {

    private final SyncerCallbacks downstream;
    private final Runnable onOpen;
    /** Held events in arrival order: a {@link SyncerStatus} or a {@code List<Update>}. */
    private List<Object> held = new ArrayList<>();
    private volatile boolean open;

    /**
     * @param downstream receives the stream once the gate opens
     * @param onOpen     run once, on the calling thread, just before the held events are replayed
     */
    DatastoreReadyGate(SyncerCallbacks downstream, Runnable onOpen) {
        this.downstream = downstream;
        this.onOpen = onOpen;
    }

    /** {@return whether ClusterInformation default has been seen with datastoreReady: true} */
    boolean isOpen() {
        return open;
    }

    @Override
    public void onStatusUpdated(SyncerStatus status) {
        if (open) {
            downstream.onStatusUpdated(status);
        } else {
            held.add(status);
        }
    }

    @Override
    public void onUpdates(List<Update> updates) {
        if (open) {
            downstream.onUpdates(updates);
            return;
        }
        held.add(updates);
        Boolean ready = null;
        for (Update u : updates) {
            if (u.key().equals(FelixDaemon.CLUSTER_INFO)) {
                ready = u.value() instanceof ClusterInformation ci && ci.spec() != null
                        && Boolean.TRUE.equals(ci.spec().datastoreReady());
            }
        }
        if (Boolean.TRUE.equals(ready)) {
            openNow();
        }
    }

    @SuppressWarnings("unchecked")
    private void openNow() {
        open = true;
        onOpen.run();
        List<Object> replay = held;
        held = null;
        for (Object e : replay) {
            if (e instanceof SyncerStatus s) {
                downstream.onStatusUpdated(s);
            } else {
                downstream.onUpdates((List<Update>) e);
            }
        }
    }
}
