package calico.goldmane.store;

import calico.libcalico.goldmane.proto.FlowKey;
import java.util.Arrays;
import java.util.List;

/**
 * One flow key across time: its rows, one per bucket it has data in, ascending by bucket, stored
 * column-wise in primitive arrays (about 48 bytes a row) because an hour of 20,000 busy keys is
 * nearly five million rows. Owned by the writer thread; scans read it only on that thread.
 */
public final class KeyEntry {

    /** Position in the store's slot table; reused after the key expires. */
    final int slot;
    /** Result id: never reused while the process runs. */
    private final long id;
    /** The canonical key; the writer sets its {@code entry} to this. */
    final KeyInterner.Interned ref;

    // Live rows are [off, off + n) of the arrays below.
    private int off;
    private int n;
    private int[] bucket;
    // Bytes in/out as longs (stride 2); packets and connections as ints (stride 5), saturating:
    // a key's packets in one bucket stay far below 2^31, and ints keep a row at ~48 bytes.
    private long[] bytes;
    private int[] counts;
    private Labels[] labels;
    private IpSet sourceIps;
    private IpSet destIps;
    // Running totals over the live rows (what sumRows over all of them gives), kept on add and
    // expiry, so a query covering the key's whole life reads them instead of every row.
    private long totPi, totPo, totBi, totBo, totSt, totCo;
    /** The intersection of every live row's labels, or null when an expiry made it stale. */
    private Labels allLabels = Labels.NONE;

    KeyEntry(int slot, long id, KeyInterner.Interned ref) {
        this.slot = slot;
        this.id = id;
        this.ref = ref;
        this.bucket = new int[2];
        this.bytes = new long[2 * 2];
        this.counts = new int[2 * 5];
        this.labels = new Labels[2];
    }

    public long id() {
        return id;
    }

    public FlowKey key() {
        return ref.key;
    }

    /** {@return the number of rows} */
    public int rows() {
        return n;
    }

    public int bucketAt(int row) {
        return bucket[off + row];
    }

    public long stat(int row, int stat) {
        int at = off + row;
        return switch (stat) {
            case Stat.BYTES_IN -> bytes[at * 2];
            case Stat.BYTES_OUT -> bytes[at * 2 + 1];
            default -> counts[at * 5 + countIndex(stat)];
        };
    }

    private static int countIndex(int stat) {
        return stat < Stat.BYTES_IN ? stat : stat - 2;
    }

    /**
     * Adds rows {@code [fromRow, ...)} up to bucket {@code toBucket} into {@code acc} (indexed by
     * {@link Stat}); live connections take the last row's value.
     *
     * @return the last row added, or {@code fromRow - 1} when none
     */
    public int sumRows(int fromRow, int toBucket, long[] acc) {
        int r = fromRow;
        long pi = 0, po = 0, bi = 0, bo = 0, st = 0, co = 0;
        int last = -1;
        for (; r < n; r++) {
            int at = off + r;
            if (bucket[at] > toBucket) {
                break;
            }
            int c = at * 5;
            pi += counts[c];
            po += counts[c + 1];
            st += counts[c + 2];
            co += counts[c + 3];
            bi += bytes[at * 2];
            bo += bytes[at * 2 + 1];
            last = at;
        }
        acc[Stat.PACKETS_IN] += pi;
        acc[Stat.PACKETS_OUT] += po;
        acc[Stat.BYTES_IN] += bi;
        acc[Stat.BYTES_OUT] += bo;
        acc[Stat.STARTED] += st;
        acc[Stat.COMPLETED] += co;
        if (last >= 0) {
            acc[Stat.LIVE] = counts[last * 5 + 4];
        }
        return r - 1;
    }

    /** {@return whether buckets {@code [from, to]} hold every row of this key (and it has rows)} */
    public boolean coveredBy(int from, int to) {
        return n > 0 && from <= bucket[off] && to >= bucket[off + n - 1];
    }

    /** Adds every row into {@code acc}, as {@code sumRows(0, lastBucket(), acc)} would, in O(1). */
    public void sumAll(long[] acc) {
        acc[Stat.PACKETS_IN] += totPi;
        acc[Stat.PACKETS_OUT] += totPo;
        acc[Stat.BYTES_IN] += totBi;
        acc[Stat.BYTES_OUT] += totBo;
        acc[Stat.STARTED] += totSt;
        acc[Stat.COMPLETED] += totCo;
        if (n > 0) {
            acc[Stat.LIVE] = counts[(off + n - 1) * 5 + 4];
        }
    }

    /** {@return the intersection of the labels of every row} (cached until an expiry) */
    public Labels allLabels() {
        if (allLabels == null) {
            Labels l = labels[off];
            List<String> src = l.source();
            List<String> dst = l.dest();
            for (int i = off + 1; i < off + n; i++) {
                Labels li = labels[i];
                if (li != l) {
                    src = Labels.intersect(src, li.source());
                    dst = Labels.intersect(dst, li.dest());
                    l = li;
                }
            }
            allLabels = src == l.source() && dst == l.dest() ? l : new Labels(List.copyOf(src), List.copyOf(dst));
        }
        return allLabels;
    }

    /** {@return every retained source address, sorted} (they all overlap the key's rows) */
    public List<String> allSourceIps() {
        return sourceIps == null ? List.of() : sourceIps.all();
    }

    public List<String> allDestIps() {
        return destIps == null ? List.of() : destIps.all();
    }

    /** Narrows the cached all-rows intersection by one row's (new) labels. */
    private void narrowAll(Labels l) {
        Labels a = allLabels;
        if (a == null || a == l) {
            return;
        }
        if (n == 1) {
            allLabels = l;
            return;
        }
        List<String> src = Labels.intersect(a.source(), l.source());
        List<String> dst = Labels.intersect(a.dest(), l.dest());
        if (src.size() != a.source().size() || dst.size() != a.dest().size()) {
            allLabels = new Labels(List.copyOf(src), List.copyOf(dst));
        }
    }

    public Labels labelsAt(int row) {
        return labels[off + row];
    }

    public int firstBucket() {
        return bucket[off];
    }

    public int lastBucket() {
        return bucket[off + n - 1];
    }

    /** {@return the first row at or after this bucket; {@link #rows()} when none} */
    public int firstRowFrom(int b) {
        if (n == 0 || bucket[off] >= b) {
            return 0;
        }
        int i = Arrays.binarySearch(bucket, off, off + n, b);
        return (i >= 0 ? i : -i - 1) - off;
    }

    public boolean hasRowIn(int from, int to) {
        if (n == 0 || bucket[off] > to || bucket[off + n - 1] < from) {
            return false;
        }
        int r = firstRowFrom(from);
        return r < n && bucketAt(r) <= to;
    }

    /** {@return the row of this bucket, or -1} */
    public int rowOf(int b) {
        if (n > 0 && bucket[off + n - 1] == b) {
            return n - 1;
        }
        int i = Arrays.binarySearch(bucket, off, off + n, b);
        return i >= 0 ? i - off : -1;
    }

    public List<String> sourceIps(int from, int to) {
        return sourceIps == null ? List.of() : sourceIps.between(from, to);
    }

    public List<String> destIps(int from, int to) {
        return destIps == null ? List.of() : destIps.between(from, to);
    }

    /** Adds a flow (or a restored row) to bucket {@code b}. */
    void add(int b, long[] counters, Labels in, List<String> srcIps, List<String> dstIps,
             Labels.Interner interner, int maxIps) {
        int row = rowOf(b);
        int at;
        if (row < 0) {
            at = insert(b);
            labels[at] = in;
            narrowAll(in);
        } else {
            at = off + row;
            Labels l = labels[at];
            if (l != in && !l.equals(in)) {
                List<String> s = Labels.intersect(l.source(), in.source());
                List<String> d = Labels.intersect(l.dest(), in.dest());
                if (s.size() != l.source().size() || d.size() != l.dest().size()) {
                    labels[at] = interner.of(s, d);
                    narrowAll(labels[at]);
                }
            }
        }
        long v;
        v = bytes[at * 2];
        bytes[at * 2] = saturatingAdd(v, counters[Stat.BYTES_IN]);
        totBi += bytes[at * 2] - v;
        v = bytes[at * 2 + 1];
        bytes[at * 2 + 1] = saturatingAdd(v, counters[Stat.BYTES_OUT]);
        totBo += bytes[at * 2 + 1] - v;
        int c = at * 5;
        int old = counts[c];
        counts[c] = saturatingInt(old, counters[Stat.PACKETS_IN]);
        totPi += counts[c] - old;
        old = counts[c + 1];
        counts[c + 1] = saturatingInt(old, counters[Stat.PACKETS_OUT]);
        totPo += counts[c + 1] - old;
        old = counts[c + 2];
        counts[c + 2] = saturatingInt(old, counters[Stat.STARTED]);
        totSt += counts[c + 2] - old;
        old = counts[c + 3];
        counts[c + 3] = saturatingInt(old, counters[Stat.COMPLETED]);
        totCo += counts[c + 3] - old;
        counts[c + 4] = saturatingInt(counts[c + 4], counters[Stat.LIVE]);
        if (!srcIps.isEmpty()) {
            if (sourceIps == null) {
                sourceIps = new IpSet(maxIps);
            }
            sourceIps.add(srcIps, b);
        }
        if (!dstIps.isEmpty()) {
            if (destIps == null) {
                destIps = new IpSet(maxIps);
            }
            destIps.add(dstIps, b);
        }
    }

    private static int saturatingInt(int a, long b) {
        long r = a + b;
        return r > Integer.MAX_VALUE ? Integer.MAX_VALUE : (int) r;
    }

    private static long saturatingAdd(long a, long b) {
        long r = a + b;
        return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
    }

    /** {@return the array index of a new, zeroed row for bucket {@code b}} */
    private int insert(int b) {
        int pos = n == 0 ? 0 : firstRowFrom(b);
        if (off + n == bucket.length) {
            grow();
        }
        int at = off + pos;
        int tail = n - pos;
        if (tail > 0) {
            System.arraycopy(bucket, at, bucket, at + 1, tail);
            System.arraycopy(bytes, at * 2, bytes, (at + 1) * 2, tail * 2);
            System.arraycopy(counts, at * 5, counts, (at + 1) * 5, tail * 5);
            System.arraycopy(labels, at, labels, at + 1, tail);
        }
        bucket[at] = b;
        Arrays.fill(bytes, at * 2, at * 2 + 2, 0L);
        Arrays.fill(counts, at * 5, at * 5 + 5, 0);
        n++;
        return at;
    }

    /** Makes room for one more row: compacts when a quarter or more is expired, else grows by half. */
    private void grow() {
        int cap = bucket.length;
        int newCap = off > 0 && off >= cap / 4 ? cap : cap + Math.max(2, cap / 2);
        int[] nb = new int[newCap];
        long[] nby = new long[newCap * 2];
        int[] nc = new int[newCap * 5];
        Labels[] nl = new Labels[newCap];
        System.arraycopy(bucket, off, nb, 0, n);
        System.arraycopy(bytes, off * 2, nby, 0, n * 2);
        System.arraycopy(counts, off * 5, nc, 0, n * 5);
        System.arraycopy(labels, off, nl, 0, n);
        bucket = nb;
        bytes = nby;
        counts = nc;
        labels = nl;
        off = 0;
    }

    /** Drops rows older than {@code b}; {@return whether the key has no rows left} */
    boolean expireBefore(int b) {
        while (n > 0 && bucket[off] < b) {
            int c = off * 5;
            totPi -= counts[c];
            totPo -= counts[c + 1];
            totSt -= counts[c + 2];
            totCo -= counts[c + 3];
            totBi -= bytes[off * 2];
            totBo -= bytes[off * 2 + 1];
            allLabels = null;
            labels[off] = null;
            off++;
            n--;
        }
        if (n == 0) {
            off = 0;
            allLabels = Labels.NONE;
        }
        if (sourceIps != null) {
            sourceIps.dropBefore(b);
        }
        if (destIps != null) {
            destIps.dropBefore(b);
        }
        return n == 0;
    }
}
