package calico.goldmane.query;

import calico.goldmane.engine.ScanTask;
import calico.goldmane.store.Buckets;
import calico.goldmane.store.KeyEntry;
import calico.goldmane.store.Labels;
import calico.goldmane.store.Stat;
import calico.libcalico.goldmane.proto.Flow;
import calico.libcalico.goldmane.proto.FlowKey;
import calico.libcalico.goldmane.proto.FlowListResult;
import calico.libcalico.goldmane.proto.FlowResult;
import calico.libcalico.goldmane.proto.SortBy;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * List: on the writer, sums each matching key's rows in range (per aggregation window); off the
 * writer, sorts, pages and builds the protos.
 */
public final class ListScan implements ScanTask<FlowListResult> {

    /** One result being built: a key over one window of buckets. */
    private static final class Acc {
        final long id;
        final FlowKey key;
        final int firstBucket;
        int lastBucket;
        final long[] stats = new long[Stat.COUNT];
        List<String> src;
        List<String> dst;
        List<String> srcIps;
        List<String> dstIps;

        Acc(long id, FlowKey key, int firstBucket) {
            this.id = id;
            this.key = key;
            this.firstBucket = firstBucket;
        }
    }

    private final Buckets buckets;
    private final BucketRange range;
    private final FlowFilter filter;
    private final SortBy sort;
    private final Paging paging;
    private final int windowBuckets;
    private final List<Acc> found = new ArrayList<>();

    ListScan(Buckets buckets, BucketRange range, FlowFilter filter, SortBy sort, Paging paging, int windowBuckets) {
        this.buckets = buckets;
        this.range = range;
        this.filter = filter;
        this.sort = sort;
        this.paging = paging;
        this.windowBuckets = windowBuckets;
    }

    @Override
    public void visit(KeyEntry e) {
        if (!e.hasRowIn(range.from(), range.to()) || !filter.matches(e.key())) {
            return;
        }
        if (windowBuckets == 0 && e.coveredBy(range.from(), range.to())) {
            // The range holds the key's whole life (the default whole-retention List): running
            // totals and cached labels and addresses, no walk over the rows.
            Acc acc = new Acc(e.id(), e.key(), e.firstBucket());
            acc.lastBucket = e.lastBucket();
            e.sumAll(acc.stats);
            Labels l = e.allLabels();
            acc.src = l.source();
            acc.dst = l.dest();
            acc.srcIps = e.allSourceIps();
            acc.dstIps = e.allDestIps();
            found.add(acc);
            return;
        }
        int r = e.firstRowFrom(range.from());
        int n = e.rows();
        while (r < n && e.bucketAt(r) <= range.to()) {
            int b = e.bucketAt(r);
            // One result per key (whole range) or per key and aligned window.
            int windowEnd = windowBuckets == 0 ? range.to()
                    : Math.min(range.to(), (Math.floorDiv(b, windowBuckets) + 1) * windowBuckets - 1);
            Acc acc = new Acc(e.id(), e.key(), b);
            int last = e.sumRows(r, windowEnd, acc.stats);
            acc.lastBucket = e.bucketAt(last);
            Labels l = e.labelsAt(r);
            List<String> src = l.source();
            List<String> dst = l.dest();
            for (int i = r + 1; i <= last; i++) {
                Labels li = e.labelsAt(i);
                if (li != l) {
                    src = Labels.intersect(src, li.source());
                    dst = Labels.intersect(dst, li.dest());
                    l = li;
                }
            }
            acc.src = src;
            acc.dst = dst;
            close(e, acc);
            r = last + 1;
        }
    }

    private void close(KeyEntry e, Acc acc) {
        if (acc != null) {
            acc.srcIps = e.sourceIps(acc.firstBucket, acc.lastBucket);
            acc.dstIps = e.destIps(acc.firstBucket, acc.lastBucket);
            found.add(acc);
        }
    }

    @Override
    public FlowListResult finish() {
        Comparator<Acc> order = comparator(sort);
        // Only the results up to the end of the requested page need ordering.
        long need = paging.size() == 0 ? found.size() : Math.min(found.size(), (paging.page() + 1L) * paging.size());
        List<Acc> ordered = need * 4 < found.size() ? smallest(found, (int) need, order) : sorted(found, order);
        var out = FlowListResult.newBuilder().setMeta(paging.meta(found.size()));
        for (Acc a : paging.slice(ordered)) {
            Flow.Builder f = Stat.write(a.stats, Flow.newBuilder()).setKey(a.key)
                    .setStartTime(buckets.start(a.firstBucket)).setEndTime(buckets.end(a.lastBucket))
                    .addAllSourceLabels(a.src).addAllDestLabels(a.dst)
                    .addAllSourceIps(a.srcIps).addAllDestIps(a.dstIps);
            out.addFlows(FlowResult.newBuilder().setId(a.id).setFlow(f));
        }
        return out.build();
    }

    private static List<Acc> sorted(List<Acc> all, Comparator<Acc> order) {
        all.sort(order);
        return all;
    }

    /** {@return the {@code k} first of {@code all} in {@code order}, ordered} (a bounded max-heap) */
    private static List<Acc> smallest(List<Acc> all, int k, Comparator<Acc> order) {
        if (k == 0) {
            return List.of();
        }
        var heap = new java.util.PriorityQueue<Acc>(k, order.reversed());
        for (Acc a : all) {
            if (heap.size() < k) {
                heap.add(a);
            } else if (order.compare(a, heap.peek()) < 0) {
                heap.poll();
                heap.add(a);
            }
        }
        var out = new ArrayList<>(heap);
        out.sort(order);
        return out;
    }

    /** Newest first; name, namespace and type sorts ascending with newest first among equals. */
    private static Comparator<Acc> comparator(SortBy sort) {
        Comparator<Acc> time = Comparator.<Acc>comparingInt(a -> a.firstBucket).reversed()
                .thenComparingLong(a -> a.id);
        return switch (sort) {
            case Time, UNRECOGNIZED -> time;
            case DestName -> Comparator.<Acc, String>comparing(a -> a.key.getDestName()).thenComparing(time);
            case DestNamespace -> Comparator.<Acc, String>comparing(a -> a.key.getDestNamespace()).thenComparing(time);
            case DestType -> Comparator.<Acc>comparingInt(a -> a.key.getDestTypeValue()).thenComparing(time);
            case SourceName -> Comparator.<Acc, String>comparing(a -> a.key.getSourceName()).thenComparing(time);
            case SourceNamespace -> Comparator.<Acc, String>comparing(a -> a.key.getSourceNamespace())
                    .thenComparing(time);
            case SourceType -> Comparator.<Acc>comparingInt(a -> a.key.getSourceTypeValue()).thenComparing(time);
        };
    }
}
