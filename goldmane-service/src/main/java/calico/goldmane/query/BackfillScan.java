package calico.goldmane.query;

import calico.goldmane.engine.ScanTask;
import calico.goldmane.store.Buckets;
import calico.goldmane.store.FlowStore;
import calico.goldmane.store.KeyEntry;
import calico.goldmane.store.Stat;
import calico.goldmane.store.Window;
import calico.libcalico.goldmane.proto.FlowResult;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.IntConsumer;

/**
 * A stream's backfill: one result per key and closed bucket from the requested start up to the
 * last closed bucket at the time the scan begins. {@code onBegin} receives that bucket on the
 * writer, before any rollover can intervene, so the stream takes live windows strictly after it:
 * nothing is sent twice and nothing is missed.
 */
public final class BackfillScan implements ScanTask<List<FlowResult>> {

    private record Item(int bucket, Window.Row row) {
    }

    private final Buckets buckets;
    private final int from;
    private final FlowFilter filter;
    private final IntConsumer onBegin;
    private int upTo;
    private final List<Item> items = new ArrayList<>();

    BackfillScan(Buckets buckets, int from, FlowFilter filter, IntConsumer onBegin) {
        this.buckets = buckets;
        this.from = from;
        this.filter = filter;
        this.onBegin = onBegin;
    }

    @Override
    public void begin(FlowStore store) {
        upTo = store.head() - 1;
        onBegin.accept(upTo);
    }

    @Override
    public void visit(KeyEntry e) {
        if (!e.hasRowIn(from, upTo) || !filter.matches(e.key())) {
            return;
        }
        for (int r = e.firstRowFrom(from), n = e.rows(); r < n; r++) {
            int b = e.bucketAt(r);
            if (b > upTo) {
                break;
            }
            long[] s = new long[Stat.COUNT];
            for (int i = 0; i < Stat.COUNT; i++) {
                s[i] = e.stat(r, i);
            }
            items.add(new Item(b, new Window.Row(e.id(), e.key(), s, e.labelsAt(r), e.sourceIps(b, b),
                    e.destIps(b, b))));
        }
    }

    @Override
    public List<FlowResult> finish() {
        items.sort(Comparator.<Item>comparingInt(i -> i.bucket).thenComparingLong(i -> i.row.id()));
        var out = new ArrayList<FlowResult>(items.size());
        for (Item i : items) {
            out.add(FlowResult.newBuilder().setId(i.row.id())
                    .setFlow(i.row.toFlow(buckets.start(i.bucket), buckets.end(i.bucket))).build());
        }
        return out;
    }
}
