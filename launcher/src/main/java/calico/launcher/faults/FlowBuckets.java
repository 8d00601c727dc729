package calico.launcher.faults;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The flow ledger: connections the prober made per 15 s bucket (aligned to the epoch, as goldmane's
 * buckets are) against the connections goldmane recorded for that bucket. The prober sends no allowed
 * probe in a guard band around each boundary ({@link #inGuardBand}), so that a connection falls into
 * the same bucket whichever clock (the prober's, felix's flush, goldmane's window) places it.
 */
record FlowBuckets(long bucketMillis, long guardBeforeMillis, long guardAfterMillis) {

    static final FlowBuckets GOLDMANE = new FlowBuckets(15_000, 1_000, 1_000);

    /** One bucket: connections sent and recorded. */
    record Bucket(long start, long sent, long recorded) {
        long lost() {
            return Math.max(0, sent - recorded);
        }
    }

    long bucketOf(long at) {
        return Math.floorDiv(at, bucketMillis) * bucketMillis;
    }

    /** The first bucket boundary at or after {@code at}. */
    long boundaryAtOrAfter(long at) {
        long b = bucketOf(at);
        return b == at ? b : b + bucketMillis;
    }

    boolean inGuardBand(long at) {
        long sinceStart = at - bucketOf(at);
        return sinceStart < guardAfterMillis || bucketMillis - sinceStart <= guardBeforeMillis;
    }

    /** Allowed probes that connected, per bucket, within {@code [from, to)} (bucket boundaries). */
    Map<Long, Long> sent(List<Probe> probes, long from, long to) {
        Map<Long, Long> sent = new TreeMap<>();
        for (long b = from; b < to; b += bucketMillis) {
            sent.put(b, 0L);
        }
        for (Probe p : probes) {
            if (p.kind() == Probe.Kind.ALLOWED && p.ok() && p.at() >= from && p.at() < to) {
                sent.merge(bucketOf(p.at()), 1L, Long::sum);
            }
        }
        return sent;
    }

    /** Pairs what was sent with what was recorded, bucket by bucket (a bucket missing from {@code recorded} recorded 0). */
    static List<Bucket> compare(Map<Long, Long> sent, Map<Long, Long> recorded) {
        List<Bucket> out = new ArrayList<>();
        sent.forEach((start, n) -> out.add(new Bucket(start, n, recorded.getOrDefault(start, 0L))));
        return out;
    }

    /**
     * A time span, {@code [from, to)} in epoch ms: one fault's window. {@code carriesFlows}: the killed process
     * is on the flow records' path (felix, typha, goldmane, the datastore...); BIRD and the CNI daemon never hold
     * a record, so a loss in their window is another fault's.
     */
    record Span(long from, long to, boolean carriesFlows) {
    }

    /**
     * {@return the connections lost per span}: each bucket's loss goes to the last span killed before
     * the bucket's end among those overlapping it that carry flows (when none does, the last of them, so
     * that no loss goes unshown). Windows follow each other, and a kill loses what felix had not flushed
     * since the bucket began: felix killed 10 s into a bucket whose first 10 s were typha's window loses
     * that bucket's records, which are felix's loss, not typha's (the span overlapping most would name
     * typha); BIRD killed after felix in the same bucket leaves it felix's. A bucket no span overlaps
     * counts for none. Index i of the answer is {@code spans.get(i)}'s.
     */
    long[] lostPerSpan(List<Bucket> buckets, List<Span> spans) {
        long[] lost = new long[spans.size()];
        for (Bucket b : buckets) {
            int last = -1;
            for (int i = 0; i < spans.size(); i++) {
                Span s = spans.get(i);
                boolean overlaps = s.from() < b.start() + bucketMillis && s.to() > b.start();
                if (overlaps && (last < 0 || ranksAbove(s, spans.get(last)))) {
                    last = i;
                }
            }
            if (last >= 0) {
                lost[last] += b.lost();
            }
        }
        return lost;
    }

    /** Of two spans overlapping one bucket: one that carries flows first, then the one killed later. */
    private static boolean ranksAbove(Span s, Span other) {
        if (s.carriesFlows() != other.carriesFlows()) {
            return s.carriesFlows();
        }
        return s.from() > other.from();
    }
}
