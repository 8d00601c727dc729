package calico.felix.dataplane;

import calico.felix.calc.DataplaneUpdate;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The hand-over between the graph's thread and the dataplane thread (kernel-dataplane.md
 * invariant 2): batches queue in order; the dataplane thread takes every queued batch at once;
 * beyond {@code maxUpdates} queued updates {@link #offer} blocks, so the syncer still feels
 * back-pressure. Counts what was handed over and applied, so {@link #awaitApplied} can wait for
 * everything handed over before it was called (and for rewrites the driver holds back).
 * Thread-safe: every method holds this object's monitor.
 */
final class ApplyQueue {

    /** What {@link #offer} did with a batch. */
    enum Offered {
        /** Queued, and no drain is pending: the caller posts one to the dataplane thread. */
        POST_DRAIN,
        /** Queued behind a pending drain, which takes it too. */
        QUEUED,
        /** Dropped: the dataplane is closed. */
        CLOSED
    }

    /** When the last batch was handed over (System.nanoTime()), and whether the queue is over its bound. */
    record Arrival(long lastHandedOver, boolean overBound) {
    }

    /** After an apply: whether batches queued meanwhile, and whether the caller must post a drain for held-back rewrites. */
    record AfterApply(boolean more, boolean postForHeld) {
    }

    private final int maxUpdates;
    private final Deque<List<DataplaneUpdate>> queue = new ArrayDeque<>();
    private int queuedUpdates;
    private boolean drainPosted;
    private long lastHandedOver;
    private long handedOver;
    private long applied;
    /** Whether the driver holds rewrites back: batches applied, but not all of them yet. */
    private boolean holding;
    private boolean closed;

    /** @param maxUpdates queued updates beyond which {@link #offer} blocks */
    ApplyQueue(int maxUpdates) {
        this.maxUpdates = maxUpdates;
    }

    /** Appends {@code batch}, first waiting while more than {@code maxUpdates} updates are queued. */
    synchronized Offered offer(List<DataplaneUpdate> batch) throws InterruptedException {
        while (queuedUpdates > maxUpdates && !closed) {
            wait();
        }
        if (closed) {
            return Offered.CLOSED;
        }
        queue.addLast(batch);
        queuedUpdates += batch.size();
        handedOver++;
        lastHandedOver = System.nanoTime();
        boolean post = !drainPosted;
        drainPosted = true;
        return post ? Offered.POST_DRAIN : Offered.QUEUED;
    }

    /**
     * Waits until every batch handed over before this call is applied and nothing is held back;
     * {@return false} on timeout or when closed first.
     */
    synchronized boolean awaitApplied(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        long target = handedOver;
        while (applied < target || holding) {
            long left = deadline - System.nanoTime();
            if (left <= 0 || closed) {
                return false;
            }
            try {
                TimeUnit.NANOSECONDS.timedWait(this, left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }

    synchronized Arrival arrival() {
        return new Arrival(lastHandedOver, queuedUpdates > maxUpdates);
    }

    /** Takes every queued batch, in order; blocked callers may queue again, and the next one posts a drain. */
    synchronized List<List<DataplaneUpdate>> takeAll() {
        List<List<DataplaneUpdate>> taken = new ArrayList<>(queue);
        queue.clear();
        queuedUpdates = 0;
        drainPosted = false;
        notifyAll(); // room again for a blocked offer
        return taken;
    }

    synchronized boolean isEmpty() {
        return queue.isEmpty();
    }

    /**
     * Records whether the driver holds rewrites back after an apply. While it does, an apply
     * must follow (of nothing, if nothing else comes): {@link AfterApply#postForHeld} says the
     * caller must post it, because no drain is pending.
     */
    synchronized AfterApply finished(boolean held) {
        boolean more = !queue.isEmpty();
        holding = held;
        boolean post = held && !drainPosted;
        if (post) {
            drainPosted = true;
        }
        return new AfterApply(more, post);
    }

    /** {@code batches} taken by {@link #takeAll} are in the kernel (or failed). */
    synchronized void applied(int batches) {
        applied += batches;
        notifyAll();
    }

    /**
     * Batch counts at one moment.
     *
     * @param queued     handed over and not yet applied (in the queue or in the running apply)
     * @param handedOver handed over so far
     */
    record Counts(long queued, long handedOver) {
    }

    synchronized Counts counts() {
        return new Counts(handedOver - applied, handedOver);
    }

    /** Releases blocked callers and waiters; later offers are dropped. */
    synchronized void close() {
        closed = true;
        notifyAll();
    }
}
