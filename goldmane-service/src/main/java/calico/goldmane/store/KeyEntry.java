package calico.goldmane.store;

import calico.libcalico.goldmane.proto.Flow;
import calico.libcalico.goldmane.proto.FlowKey;
import java.util.Arrays;
import java.util.List;

/**
 * One flow key across time: its rows, one per bucket it has data in, ascending by bucket, stored
 * column-wise in primitive arrays (about 70 bytes a row) because an hour of 20,000 busy keys is
 * nearly five million rows. Owned by the writer thread; scans read it only on that thread.
 */
public final class KeyEntry {

    /** Position in the store's slot table; reused after the key expires. */
    final int slot;
    /** Result id: never reused while the process runs. */
    private final long id;
    private final FlowKey key;

    // Live rows are [off, off + n) of the arrays below.
    private int off;
    private int n;
    private int[] bucket;
    private long[] stats;
    private Labels[] labels;
    private IpSet sourceIps;
    private IpSet destIps;

    KeyEntry(int slot, long id, FlowKey key) {
        this.slot = slot;
        this.id = id;
        this.key = key;
        this.bucket = new int[2];
        this.stats = new long[2 * Stat.COUNT];
        this.labels = new Labels[2];
    }

    public long id() {
        return id;
    }

    public FlowKey key() {
        return key;
    }

    /** {@return the number of rows} */
    public int rows() {
        return n;
    }

    public int bucketAt(int row) {
        return bucket[off + row];
    }

    public long stat(int row, int stat) {
        return stats[(off + row) * Stat.COUNT + stat];
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
    void add(int b, long[] counters, List<String> srcLabels, List<String> dstLabels, List<String> srcIps,
             List<String> dstIps, Labels.Interner interner, int maxIps) {
        int row = rowOf(b);
        int at;
        if (row < 0) {
            at = insert(b);
            labels[at] = interner.of(srcLabels, dstLabels);
        } else {
            at = off + row;
            Labels l = labels[at];
            if (!l.source().equals(srcLabels) || !l.dest().equals(dstLabels)) {
                List<String> s = Labels.intersect(l.source(), srcLabels);
                List<String> d = Labels.intersect(l.dest(), dstLabels);
                if (s.size() != l.source().size() || d.size() != l.dest().size()) {
                    labels[at] = interner.of(s, d);
                }
            }
        }
        int base = at * Stat.COUNT;
        for (int i = 0; i < Stat.COUNT; i++) {
            stats[base + i] = saturatingAdd(stats[base + i], counters[i]);
        }
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

    void add(int b, Flow f, long[] scratch, Labels.Interner interner, int maxIps) {
        Stat.read(f, scratch);
        add(b, scratch, f.getSourceLabelsList(), f.getDestLabelsList(), f.getSourceIpsList(), f.getDestIpsList(),
                interner, maxIps);
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
            System.arraycopy(stats, at * Stat.COUNT, stats, (at + 1) * Stat.COUNT, tail * Stat.COUNT);
            System.arraycopy(labels, at, labels, at + 1, tail);
        }
        bucket[at] = b;
        Arrays.fill(stats, at * Stat.COUNT, (at + 1) * Stat.COUNT, 0L);
        n++;
        return at;
    }

    /** Makes room for one more row: compacts when a quarter or more is expired, else grows by half. */
    private void grow() {
        int cap = bucket.length;
        int newCap = off > 0 && off >= cap / 4 ? cap : cap + Math.max(2, cap / 2);
        int[] nb = new int[newCap];
        long[] ns = new long[newCap * Stat.COUNT];
        Labels[] nl = new Labels[newCap];
        System.arraycopy(bucket, off, nb, 0, n);
        System.arraycopy(stats, off * Stat.COUNT, ns, 0, n * Stat.COUNT);
        System.arraycopy(labels, off, nl, 0, n);
        bucket = nb;
        stats = ns;
        labels = nl;
        off = 0;
    }

    /** Drops rows older than {@code b}; {@return whether the key has no rows left} */
    boolean expireBefore(int b) {
        while (n > 0 && bucket[off] < b) {
            labels[off] = null;
            off++;
            n--;
        }
        if (n == 0) {
            off = 0;
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
