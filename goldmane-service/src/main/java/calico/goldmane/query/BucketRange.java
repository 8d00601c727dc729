package calico.goldmane.query;

import calico.goldmane.store.Buckets;

/**
 * The buckets a request covers, inclusive, after resolving Calico's time conventions: 0 for the
 * lower bound is the oldest retained bucket and for the upper bound "now"; positive values are
 * absolute seconds; negative values are seconds relative to now. A bucket is in range when its
 * start is in {@code [gte, lt)}.
 */
public record BucketRange(int from, int to) {

    public boolean isEmpty() {
        return from > to;
    }

    public int size() {
        return isEmpty() ? 0 : to - from + 1;
    }

    static BucketRange resolve(long gte, long lt, long nowSeconds, Buckets buckets, int head, String gteField,
                               String ltField) {
        long from = gte == 0 ? Long.MIN_VALUE : gte > 0 ? gte : nowSeconds + gte;
        long to = lt == 0 ? nowSeconds : lt > 0 ? lt : nowSeconds + lt;
        if (gte != 0 && from >= to) {
            throw new InvalidRequest(gteField, "resolves to " + from + ", not before " + ltField + " (" + to + ")");
        }
        int oldest = buckets.oldestRetained(head);
        int f = from == Long.MIN_VALUE ? oldest : Math.max(oldest, buckets.firstStartingAtOrAfter(from));
        // The open bucket counts as starting now: "now" includes it.
        int t = Math.min(head, buckets.firstStartingAtOrAfter(to) - 1);
        if (lt == 0) {
            t = head;
        }
        return new BucketRange(f, t);
    }
}
