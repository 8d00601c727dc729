package calico.felix.dataplane.nft;

import calico.dataplane.nft.NftBatch;
import calico.dataplane.nft.Nftables;
import calico.felix.dataplane.nft.NftRuleFormatter.NftChain;
import calico.felix.dataplane.rules.PolicyDriver.Programmed;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Sends planned changes through libnftables, one kernel transaction each, and keeps what is
 * programmed: a batch the kernel rejects leaves the kernel as it was, throws, and leaves the
 * driver out of sync (the next apply resyncs, invariant 3); a committed one becomes the
 * programmed {@link NftTable} and moves the write generation (a background read-back started
 * before it is stale). Confined to the dataplane thread, whose network namespace the {@link
 * Nftables} handle acts in.
 */
final class NftCommitter {

    private final Nftables nft;
    private NftTable programmed = NftTable.empty();
    /** Counts our writes: a background read-back started before one is stale. */
    private long generation;
    private boolean inSync;
    /** The state {@link #counts} describes (see {@link #counts()}). */
    private NftTable counted;
    private Programmed counts;

    NftCommitter(Nftables nft) {
        this.nft = Objects.requireNonNull(nft, "nft");
    }

    /** {@return the libnftables handle} (the verifier lists our table with it on this thread) */
    Nftables nft() {
        return nft;
    }

    /** {@return what was last programmed} */
    NftTable programmed() {
        return programmed;
    }

    long generation() {
        return generation;
    }

    /** {@return whether the kernel holds {@link #programmed()}}: false before the first resync and after any failure */
    boolean inSync() {
        return inSync;
    }

    /** The kernel may not hold what was programmed (a failure): the next apply resyncs. */
    void outOfSync() {
        inSync = false;
    }

    /** Commits {@code full} (the whole table, see {@link NftChangePlanner#fullBatch}), which programs {@code now}. */
    void resync(NftBatch full, NftTable now) {
        inSync = false;
        nft.apply(full);
        programmed = now;
        generation++;
        inSync = true;
    }

    /**
     * Takes {@code now} as programmed without writing it: the table an earlier felix left is about to be
     * compared with it and repaired ({@code NftablesDataplane}'s adoption).
     */
    void adopt(NftTable now) {
        programmed = now;
        generation++;
        inSync = true;
    }

    /** Commits {@code b}, after which the kernel holds {@code now}. */
    void commit(NftBatch b, NftTable now) {
        send(b);
        programmed = now;
    }

    /** Commits a read-back's repairs: afterwards the kernel holds what is programmed again. */
    void repair(NftBatch b) {
        send(b);
    }

    /**
     * Commits {@code b}, which rewrote {@code rewritten} (the policy-rules-only path); the counts
     * are carried forward (only rule counts change), not walked again.
     */
    void rewrite(NftBatch b, Map<String, NftChain> rewritten) {
        send(b);
        SortedMap<String, NftChain> chains = new TreeMap<>(programmed.chains());
        chains.putAll(rewritten);
        NftTable before = programmed;
        programmed = new NftTable(chains, before.bases(), before.sets());
        if (counted == before) {
            int delta = 0;
            for (NftChain c : rewritten.values()) {
                delta += c.rules().size() - before.chains().get(c.name()).rules().size();
            }
            counts = new Programmed(counts.chains(), counts.rules() + delta, counts.sets(), counts.setMembers());
            counted = programmed;
        }
    }

    private void send(NftBatch b) {
        try {
            nft.apply(b);
        } catch (RuntimeException e) {
            inSync = false;
            throw e;
        }
        generation++;
    }

    /** Deletes our table; nothing is programmed after (the driver is unusable). */
    void removeAll() {
        nft.apply(NftChangePlanner.dropTable());
        programmed = NftTable.empty();
        generation++;
        inSync = false;
    }

    /**
     * {@return the sizes of what is programmed}: counted once per programmed state (a walk of
     * every chain and set, ~1 ms at 5,000 chains), and carried forward by {@link #rewrite}.
     */
    Programmed counts() {
        if (counted != programmed) {
            counts = programmed.counts();
            counted = programmed;
        }
        return counts;
    }

    void close() {
        nft.close();
    }
}
