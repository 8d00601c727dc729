package calico.goldmane.store;

import java.util.Arrays;

/**
 * The writer's de-duplication claims, {@code (slot, node, start, end)}, in one open-addressing
 * table of primitive longs (linear probing, backward-shift deletion): no record and no map entry
 * per counted report, so millions of live claims cost 24 bytes each plus slack, not ~100.
 * Writer-only, like the rest of the store.
 */
final class ClaimSet {

    private static final long EMPTY = -1L; // slot and node are never negative, so k0 is never -1

    private long[] t; // triples: k0 = slot << 32 | node, k1 = start, k2 = end
    private int mask;
    private int size;

    ClaimSet() {
        alloc(1 << 12);
    }

    private void alloc(int cap) {
        t = new long[cap * 3];
        for (int i = 0; i < t.length; i += 3) {
            t[i] = EMPTY;
        }
        mask = cap - 1;
    }

    static long k0(int slot, int node) {
        return (long) slot << 32 | (node & 0xffffffffL);
    }

    private int home(long k0, long k1, long k2) {
        long h = k0 * 0x9E3779B97F4A7C15L ^ k1 * 0xC2B2AE3D27D4EB4FL ^ k2 * 0x165667B19E3779F9L;
        h ^= h >>> 33;
        h *= 0xFF51AFD7ED558CCDL;
        h ^= h >>> 33;
        return (int) h & mask;
    }

    int size() {
        return size;
    }

    /** {@return whether the claim was new} */
    boolean add(long k0, long k1, long k2) {
        if ((size + 1) * 2 > mask + 1) {
            grow();
        }
        int i = home(k0, k1, k2);
        while (t[i * 3] != EMPTY) {
            if (t[i * 3] == k0 && t[i * 3 + 1] == k1 && t[i * 3 + 2] == k2) {
                return false;
            }
            i = (i + 1) & mask;
        }
        t[i * 3] = k0;
        t[i * 3 + 1] = k1;
        t[i * 3 + 2] = k2;
        size++;
        return true;
    }

    boolean contains(long k0, long k1, long k2) {
        int i = home(k0, k1, k2);
        while (t[i * 3] != EMPTY) {
            if (t[i * 3] == k0 && t[i * 3 + 1] == k1 && t[i * 3 + 2] == k2) {
                return true;
            }
            i = (i + 1) & mask;
        }
        return false;
    }

    void remove(long k0, long k1, long k2) {
        int i = home(k0, k1, k2);
        while (true) {
            if (t[i * 3] == EMPTY) {
                return;
            }
            if (t[i * 3] == k0 && t[i * 3 + 1] == k1 && t[i * 3 + 2] == k2) {
                break;
            }
            i = (i + 1) & mask;
        }
        // Backward shift: move later entries of the run into the hole when their home allows it.
        int hole = i;
        int j = i;
        while (true) {
            j = (j + 1) & mask;
            if (t[j * 3] == EMPTY) {
                break;
            }
            int h = home(t[j * 3], t[j * 3 + 1], t[j * 3 + 2]);
            // The entry at j may move to the hole unless its home lies cyclically in (hole, j].
            boolean homeBetween = hole <= j ? (h > hole && h <= j) : (h > hole || h <= j);
            if (!homeBetween) {
                System.arraycopy(t, j * 3, t, hole * 3, 3);
                hole = j;
            }
        }
        t[hole * 3] = EMPTY;
        size--;
    }

    private void grow() {
        long[] old = t;
        alloc((mask + 1) * 2);
        size = 0;
        for (int i = 0; i < old.length; i += 3) {
            if (old[i] != EMPTY) {
                add(old[i], old[i + 1], old[i + 2]);
            }
        }
    }

    /** A growable list of claim triples (one per bucket, for expiry and snapshots). */
    static final class Triples {
        long[] a = new long[3 * 16];
        int n; // triples

        void add(long k0, long k1, long k2) {
            if ((n + 1) * 3 > a.length) {
                a = Arrays.copyOf(a, a.length * 2);
            }
            a[n * 3] = k0;
            a[n * 3 + 1] = k1;
            a[n * 3 + 2] = k2;
            n++;
        }
    }
}
