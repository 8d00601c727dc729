package calico.libcalico.syncer;

/**
 * Where a syncer is in its life, as Calico's {@code api.SyncStatus}. It only moves forward:
 * {@code WAIT_FOR_DATASTORE} → {@code RESYNC_IN_PROGRESS} → {@code IN_SYNC}, each sent once. A
 * later resync after a watch failure or compaction does not change it.
 */
public enum SyncerStatus {
    /** Started; nothing has been heard from the datastore yet. */
    WAIT_FOR_DATASTORE,
    /** The datastore answered; the initial snapshot is being delivered. */
    RESYNC_IN_PROGRESS,
    /** Every kind's initial snapshot has been delivered; what follows are live changes. */
    IN_SYNC
}
