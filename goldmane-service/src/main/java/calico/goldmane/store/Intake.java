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
        return new Update(f.hasKey() ? keys.intern(f.getKey()) : null, f.getStartTime(), f.getEndTime(), c,
                labels.of(f.getSourceLabelsList(), f.getDestLabelsList()), f.getSourceIpsList(), f.getDestIpsList());
    }

    KeyInterner keys() {
        return keys;
    }

    Labels.Interner labels() {
        return labels;
    }
}
