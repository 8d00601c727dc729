package calico.libcalico.syncer;

import java.util.List;

/**
 * Receives a syncer's output. Both methods are called from the syncer's one dispatch thread,
 * never concurrently, in the order the events happened; they should return promptly, since
 * the syncer's buffers fill while they run and then the watchers wait.
 */
public interface SyncerCallbacks {

    /** The syncer moved to {@code status}; each status is reported once, in enum order. */
    void onStatusUpdated(SyncerStatus status);

    /** A batch of changes, in order; never empty. The list is not modified afterwards. */
    void onUpdates(List<Update> updates);
}
