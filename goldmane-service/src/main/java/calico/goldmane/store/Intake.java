package calico.goldmane.store;

import calico.libcalico.goldmane.proto.Flow;

/**
 * The part of the store collector threads use, thread-safe: the canonical keys and labels.
 * {@link #prepare} does per flow everything that needs no ring state (hashing and comparing the
 * key and labels, reading the counters), so the single writer only finds the row and adds.
 */
public final class Intake {

    private final KeyInterner keys = new KeyInterner();
    private final Labels.Interner labels = new Labels.Interner();

    /** {@return the flow, ready for {@link FlowStore#apply(Update, String)}}; any thread. */
    public Update prepare(Flow f) {
        long[] c = new long[Stat.COUNT];
        Stat.read(f, c);
        KeyInterner.Interned key = f.hasKey() ? keys.intern(f.getKey()) : null;
        return new Update(key, f.getStartTime(), f.getEndTime(), c, labels(key, f), f.getSourceIpsList(),
                f.getDestIpsList());
    }

    /** A key's flows usually carry the same labels: compare with its last ones before hashing. */
    private Labels labels(KeyInterner.Interned key, Flow f) {
        Labels last = key == null ? null : key.lastLabels;
        if (last != null && last.source().equals(f.getSourceLabelsList()) && last.dest().equals(f.getDestLabelsList())) {
            return last;
        }
        Labels l = labels.of(f.getSourceLabelsList(), f.getDestLabelsList());
        if (key != null) {
            key.lastLabels = l;
        }
        return l;
    }

    KeyInterner keys() {
        return keys;
    }

    Labels.Interner labels() {
        return labels;
    }
}
