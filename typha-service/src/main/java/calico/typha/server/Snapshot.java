package calico.typha.server;

import java.util.List;
import java.util.Map;

/**
 * The whole state at one sequence, as ready-made chunks (the last has {@code last_snapshot_chunk}),
 * followed by the in-sync marker when the syncer was in sync then. Immutable and shared by every
 * client that starts from it.
 *
 * @param sequence     the last breadcrumb folded in; the client continues with sequence + 1
 * @param revisions    per kind, the highest revision folded in
 * @param messages     chunks, then the status message if any
 * @param size         resources in it
 * @param createdNanos when it was built
 */
record Snapshot(long sequence, Map<String, Long> revisions, List<SharedMessage> messages, int size, long createdNanos) {
}
