package calico.typha.server;

/**
 * One entry of the delta log: a batch of deltas or a status change, already built as the
 * message every client receives (shared, immutable).
 *
 * @param sequence     consecutive, from 1; a client that has sent sequence s next wants s + 1
 * @param message      the message as sent (plain, and compressed on demand)
 * @param kvCount      updates it carries (0 for a status change); the log is bounded by their sum
 * @param createdNanos {@link System#nanoTime()} when the syncer delivered it, for fan-out latency
 */
record Breadcrumb(long sequence, SharedMessage message, int kvCount, long createdNanos) {
}
