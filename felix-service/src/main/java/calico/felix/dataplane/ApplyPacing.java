package calico.felix.dataplane;

import java.time.Duration;

/**
 * When the next apply takes the queue, and whether the driver may hold rewrites back
 * (kernel-dataplane.md invariant 2). While felix catches up (batches queued during the last
 * apply), the next apply gathers batches for twice as long as that apply took (at least {@link
 * #MIN_GATHER}, at most {@link #MAX_GATHER}): each apply's fixed cost (libnftables' cache, the
 * kernel's table validation, a restore of the whole table) grows with the table, not with the
 * change, so a catch-up pays it fewer times. It starts as soon as no batch has been handed over
 * for {@link #QUIET} (the writes have stopped: the last one must not wait) or the queue is over
 * its bound. When nothing queued during an apply, the next change is applied at once. Confined to
 * the dataplane thread; times are System.nanoTime() values, passed in.
 */
final class ApplyPacing {

    /** While catching up, the next apply gathers batches for twice the last apply's duration, at least this long... */
    static final Duration MIN_GATHER = Duration.ofMillis(500);
    /** ... and at most this long. */
    static final Duration MAX_GATHER = Duration.ofSeconds(2);
    /**
     * A gathering apply starts early once no batch has been handed over for this long: the
     * writes have stopped, and the last of them must not wait out the window. (25 ms was too
     * short: on a busy machine the graph's batches come in bursts with longer gaps.)
     */
    static final Duration QUIET = Duration.ofMillis(150);
    /**
     * A catch-up apply of at least this many updates, with batches queued behind it by the time
     * the driver asks, tells the driver more are coming.
     */
    static final int MORE_COMING_MIN_UPDATES = 100;
    /** The driver holds rewrites back for at most this long while a catch-up streams on. */
    static final Duration MAX_HOLD = Duration.ofSeconds(4);

    /** Until when the next apply gathers batches; 0 when it starts at once. */
    private long gatherUntil;
    /** The first apply whose rewrites the driver still holds back; 0: none held. */
    private long holdingSince;

    /** {@return whether the next apply gathers} (batches queued during the last one, or it held rewrites back) */
    boolean catchingUp() {
        return gatherUntil != 0;
    }

    /** {@return how long a gathering apply still waits at {@code now}}; zero or less: take the queue now */
    long gatherWait(long now, ApplyQueue.Arrival arrival) {
        if (gatherUntil == 0 || arrival.overBound()) {
            return 0;
        }
        return Math.min(gatherUntil, arrival.lastHandedOver() + QUIET.toNanos()) - now;
    }

    /** {@return whether an apply of {@code updates} starting at {@code start} may be told more is coming} */
    boolean mayHold(boolean catchingUp, int updates, long start) {
        return catchingUp && updates >= MORE_COMING_MIN_UPDATES
                && (holdingSince == 0 || start - holdingSince < MAX_HOLD.toNanos());
    }

    /** An apply ran from {@code start} to {@code end}; {@code held}: the driver holds rewrites back; {@code more}: batches queued meanwhile. */
    void finished(long start, long end, boolean held, boolean more) {
        holdingSince = !held ? 0 : holdingSince == 0 ? start : holdingSince;
        long gather = Math.min(Math.max(2 * (end - start), MIN_GATHER.toNanos()), MAX_GATHER.toNanos());
        gatherUntil = more || held ? end + gather : 0;
    }
}
