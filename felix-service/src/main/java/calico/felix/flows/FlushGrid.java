package calico.felix.flows;

import java.time.Duration;

/**
 * When felix flushes flow reports: on the multiples of {@code flowLogsFlushInterval} since the
 * epoch, not every interval from whenever collection started. Goldmane counts a report into the
 * bucket holding its {@code start_time} (its buckets are epoch-aligned, 15 s by default, as the
 * flush interval), so a report whose interval straddled a bucket boundary put the connections of
 * the new bucket's first seconds into the previous bucket, and so did a late flush whose report
 * ended at its own time (issue 29's fault suite: per bucket, losses). On the grid each report covers
 * one interval, whenever its flush runs, and lands in the bucket its connections were seen in.
 *
 * @param millis the flush interval, ms: whole seconds, at least one (reports carry seconds)
 */
record FlushGrid(long millis) {

    FlushGrid {
        if (millis < 1000 || millis % 1000 != 0) {
            throw new IllegalArgumentException("flush interval: whole seconds, at least 1 s, got " + millis + " ms");
        }
    }

    /** {@return the grid of {@code interval}} rounded up to whole seconds (a report's times are seconds) */
    static FlushGrid of(Duration interval) {
        return new FlushGrid(Math.max(1, (interval.toMillis() + 999) / 1000) * 1000);
    }

    /** {@return ms from {@code nowMillis} to the next grid point after it} (a whole interval when on one) */
    long delayToNext(long nowMillis) {
        return millis - Math.floorMod(nowMillis, millis);
    }

    /**
     * {@return the end (epoch seconds) of the interval a flush at {@code nowMillis} closes}: the last
     * grid point at or before it, or one up to half a second ahead (the scheduler's clock is not the
     * wall clock: a flush may fire a little early and must still close the interval it was scheduled
     * for); a late flush (load) closes the one it was late for. Never before {@code start + 1}.
     */
    long end(long nowMillis, long startSeconds) {
        long point = Math.floorDiv(nowMillis + Math.min(500, millis / 2), millis) * millis / 1000;
        return Math.max(point, startSeconds + 1);
    }
}
