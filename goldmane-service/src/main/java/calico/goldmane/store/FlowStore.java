package calico.goldmane.store;

import calico.libcalico.goldmane.proto.Flow;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * The ring of buckets, stored key-major: one {@link KeyEntry} per flow key holding that key's
 * rows. Not thread-safe by design: exactly one thread (the aggregator's writer) calls every
 * method, so ingestion, rollover and query slices never race.
 */
public final class FlowStore {

    /** What happened to one ingested flow. */
    public enum Outcome { COUNTED, DUPLICATE, TOO_OLD, INVALID }

    private final Buckets buckets;
    private final int maxIps;
    private final Intake intake = new Intake();
    private final KeyInterner keys = intake.keys();
    private int liveKeys;
    private final List<KeyEntry> slots = new ArrayList<>();
    private final ArrayList<Integer> freeSlots = new ArrayList<>();
    private long nextId = 1;
    private int head;

    // De-duplication: every report counted within the replay horizon, and the same claims per
    // bucket so that rollover can expire them.
    private final ClaimSet claims = new ClaimSet();
    private final Map<Integer, ClaimSet.Triples> claimsByBucket = new HashMap<>();
    private final Map<String, Integer> nodeIds = new HashMap<>();
    private final List<String> nodeNames = new ArrayList<>();

    /** Closed buckets that received flows after they were copied out. */
    private final TreeSet<Integer> lateBuckets = new TreeSet<>();
    private final Labels.Interner interner = intake.labels();

    public FlowStore(Buckets buckets, int maxIpsPerFlow, int head) {
        this.buckets = buckets;
        this.maxIps = maxIpsPerFlow;
        this.head = head;
    }

    public Buckets buckets() {
        return buckets;
    }

    /** {@return the open bucket} */
    public int head() {
        return head;
    }

    /**
     * {@return where collector threads prepare flows} (thread-safe; the one part of the store
     * other threads may use, see {@link Intake} and {@link KeyInterner})
     */
    public Intake intake() {
        return intake;
    }

    public int uniqueKeys() {
        return liveKeys;
    }

    /** {@return the size of the slot table; slots may be null} */
    public int slotCount() {
        return slots.size();
    }

    public KeyEntry slot(int i) {
        return slots.get(i);
    }

    /**
     * Counts one flow reported by {@code node} (null: no de-duplication, for tests and benches)
     * into the bucket holding its start; a start after the open bucket counts into the open one.
     */
    public Outcome apply(Flow f, String node) {
        return apply(intake.prepare(f), node);
    }

    /** As {@link #apply(Flow, String)}, with the flow prepared by {@link Intake#prepare} on any thread. */
    public Outcome apply(Update u, String node) {
        KeyInterner.Interned key = u.key();
        if (!u.valid()) {
            forgetUnused(key);
            return Outcome.INVALID;
        }
        int b = Math.min(buckets.index(u.start()), head);
        if (b < buckets.oldestAccepting(head)) {
            forgetUnused(key);
            return Outcome.TOO_OLD;
        }
        KeyEntry e = entry(key);
        if (node != null) {
            long k0 = ClaimSet.k0(e.slot, nodeId(node));
            if (!claims.add(k0, u.start(), u.end())) {
                return Outcome.DUPLICATE;
            }
            claimsByBucket.computeIfAbsent(b, k -> new ClaimSet.Triples()).add(k0, u.start(), u.end());
        }
        e.add(b, u.counters(), u.labels(), u.sourceIps(), u.destIps(), interner, maxIps);
        if (b < head) {
            lateBuckets.add(b);
        }
        return Outcome.COUNTED;
    }

    /** A rejected flow's key that has no entry leaves the table (a later flow re-interns it). */
    private void forgetUnused(KeyInterner.Interned key) {
        if (key != null && key.entry == null) {
            keys.remove(key);
        }
    }

    private KeyEntry entry(KeyInterner.Interned key) {
        KeyEntry e = key.entry;
        if (e != null) {
            return e;
        }
        KeyInterner.Interned k = keys.canonical(key);
        e = k.entry;
        if (e == null) {
            int slot = freeSlots.isEmpty() ? slots.size() : freeSlots.remove(freeSlots.size() - 1);
            e = new KeyEntry(slot, nextId++, k);
            k.entry = e;
            liveKeys++;
            if (slot == slots.size()) {
                slots.add(e);
            } else {
                slots.set(slot, e);
            }
        }
        return e;
    }

    private int nodeId(String node) {
        Integer id = nodeIds.get(node);
        if (id == null) {
            id = nodeNames.size();
            nodeNames.add(node);
            nodeIds.put(node, id);
        }
        return id;
    }

    /**
     * Opens bucket {@code newHead}: copies out the bucket that closes and any closed bucket that
     * took late flows, then expires rows, keys and claims that fell out of the ring.
     *
     * @return the windows copied out; the closed head first, flagged not late
     */
    public List<Window> advanceTo(int newHead) {
        if (newHead <= head) {
            return List.of();
        }
        var out = new ArrayList<Window>();
        out.add(window(head, false));
        for (int b : lateBuckets) {
            if (b >= buckets.oldestRetained(newHead)) {
                out.add(window(b, true));
            }
        }
        lateBuckets.clear();
        head = newHead;
        int oldest = buckets.oldestRetained(head);
        for (int i = 0; i < slots.size(); i++) {
            KeyEntry e = slots.get(i);
            if (e != null && e.expireBefore(oldest)) {
                keys.remove(e.ref);
                liveKeys--;
                slots.set(i, null);
                freeSlots.add(i);
            }
        }
        int oldestClaim = buckets.oldestAccepting(head);
        claimsByBucket.entrySet().removeIf(en -> {
            if (en.getKey() < oldestClaim) {
                ClaimSet.Triples tr = en.getValue();
                for (int i = 0; i < tr.n; i++) {
                    claims.remove(tr.a[i * 3], tr.a[i * 3 + 1], tr.a[i * 3 + 2]);
                }
                return true;
            }
            return false;
        });
        interner.trim(1 << 16);
        return out;
    }

    /**
     * {@return what a graceful stop must save: the open bucket and every closed bucket that took
     * late flows since it was last copied out}
     */
    public List<Window> unsaved() {
        var out = new ArrayList<Window>();
        out.add(window(head, false));
        for (int b : lateBuckets) {
            if (b >= buckets.oldestRetained(head)) {
                out.add(window(b, true));
            }
        }
        return out;
    }

    /** {@return a copy of one bucket} */
    public Window window(int b, boolean late) {
        var rows = new ArrayList<Window.Row>();
        for (KeyEntry e : slots) {
            if (e == null) {
                continue;
            }
            int r = e.rowOf(b);
            if (r < 0) {
                continue;
            }
            long[] s = new long[Stat.COUNT];
            for (int i = 0; i < Stat.COUNT; i++) {
                s[i] = e.stat(r, i);
            }
            rows.add(new Window.Row(e.id(), e.key(), s, e.labelsAt(r), e.sourceIps(b, b), e.destIps(b, b)));
        }
        var cl = new ArrayList<Window.Claim>();
        ClaimSet.Triples tr = claimsByBucket.get(b);
        for (int i = 0; tr != null && i < tr.n; i++) {
            long k0 = tr.a[i * 3];
            KeyEntry e = slots.get((int) (k0 >>> 32));
            cl.add(new Window.Claim(nodeNames.get((int) k0), e.key(), tr.a[i * 3 + 1], tr.a[i * 3 + 2]));
        }
        return new Window(b, buckets.start(b), buckets.end(b), List.copyOf(rows), List.copyOf(cl), late);
    }

    /** Loads a window saved earlier (start-up only): rows are added, claims re-armed if still replayable. */
    public void restore(Window w) {
        if (w.bucket() < buckets.oldestRetained(head) || w.bucket() > head) {
            return;
        }
        for (Window.Row r : w.rows()) {
            entry(keys.intern(r.key())).add(w.bucket(), r.stats(), interner.of(r.labels().source(),
                    r.labels().dest()), r.sourceIps(), r.destIps(), interner, maxIps);
        }
        if (w.bucket() >= buckets.oldestAccepting(head)) {
            for (Window.Claim c : w.claims()) {
                long k0 = ClaimSet.k0(entry(keys.intern(c.key())).slot, nodeId(c.node()));
                if (claims.add(k0, c.start(), c.end())) {
                    claimsByBucket.computeIfAbsent(w.bucket(), x -> new ClaimSet.Triples()).add(k0, c.start(), c.end());
                }
            }
        }
    }
}
