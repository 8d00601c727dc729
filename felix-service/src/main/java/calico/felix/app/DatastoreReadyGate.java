package calico.felix.app;

import calico.api.model.ClusterInformation;
import calico.libcalico.health.HealthReporter;
import calico.libcalico.syncer.SyncerCallbacks;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Felix's one readiness path, for a syncer on the datastore and for typha's stream alike: holds
 * the stream back until ClusterInformation {@code default} has {@code spec.datastoreReady: true},
 * then replays what it held, in order, and passes everything through from then on; meanwhile it
 * reports {@code FelixStartup} not ready, saying what it waits for. Nothing reaches the
 * calculation graph (or the dataplane) before the datastore is declared ready. As in Calico the
 * check is made once, at start: a later {@code datastoreReady: false} is an ordinary update.
 *
 * <p>Called from one thread (the syncer's or the typha client's dispatch thread), as
 * {@link SyncerCallbacks} are.
 */
final class DatastoreReadyGate implements SyncerCallbacks {

    private static final Logger log = LoggerFactory.getLogger(DatastoreReadyGate.class);

    private final SyncerCallbacks downstream;
    private final HealthReporter startup;
    private final String source;
    /** Held events in arrival order: a {@link SyncerStatus} or a {@code List<Update>}. */
    private List<Object> held = new ArrayList<>();
    /** Whether ClusterInformation default has been seen (with datastoreReady false). */
    private boolean seen;
    private volatile boolean open;

    /**
     * @param downstream receives the stream once the gate opens
     * @param startup    the {@code FelixStartup} reporter: not ready until the gate opens, ready from then on
     * @param source     where the stream comes from, for the health detail ({@code through typha})
     */
    DatastoreReadyGate(SyncerCallbacks downstream, HealthReporter startup, String source) {
        this.downstream = downstream;
        this.startup = startup;
        this.source = source;
        startup.report(true, false, "waiting for ClusterInformation default to have datastoreReady: true (" + source
                + ")");
    }

    /** {@return whether ClusterInformation default has been seen with datastoreReady: true} */
    boolean isOpen() {
        return open;
    }

    @Override
    public void onStatusUpdated(SyncerStatus status) {
        if (open) {
            downstream.onStatusUpdated(status);
            return;
        }
        held.add(status);
        if (status == SyncerStatus.IN_SYNC && !seen) {
            startup.report(true, false, "waiting for ClusterInformation default (" + source + ")");
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
        } else if (ready != null && !seen) {
            seen = true;
            startup.report(true, false, "waiting for ClusterInformation default to have datastoreReady: true ("
                    + source + ")");
        }
    }

    @SuppressWarnings("unchecked")
    private void openNow() {
        open = true;
        startup.report(true, true, "datastore ready (" + source + ")");
        log.info("Datastore ready: ClusterInformation default has datastoreReady: true ({})", source);
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
