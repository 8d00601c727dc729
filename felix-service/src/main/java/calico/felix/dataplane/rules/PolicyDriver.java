package calico.felix.dataplane.rules;

import calico.felix.calc.DataplaneUpdate;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * A policy dataplane driver (iptables or nftables): keeps the kernel's rules and sets equal to the
 * {@link Ruleset} that the kernel dataplane's one {@link DataplaneModel} renders to. The driver
 * is given that model when created and never folds updates into it: its owner folds each batch in
 * and then calls {@link #apply} with the same batch, which tells the driver what changed. One
 * dedicated thread calls it; implementations are not thread-safe.
 *
 * <p>Contract shared by both drivers: the first {@link #apply} (and any after a failure) is a
 * full {@link #resync}; later ones write only changed chains and sets; a failed batch leaves the
 * kernel as it was (each backend's transaction is atomic) and the next call resyncs; nothing we
 * do not own is touched.
 */
public interface PolicyDriver extends AutoCloseable {

    /** What one apply, resync or refresh did, for logs, metrics and tests. */
    record ApplyStats(boolean resync, int chainsWritten, int chainsDeleted, int setsWritten, int setsDeleted) {
    }

    /** Sizes of what is programmed now, for metrics and the admin API. */
    record Programmed(int chains, int rules, int sets, int setMembers) {
    }

    /** Programs the model after {@code batch} was folded into it ({@code batch}: what changed, a hint). */
    ApplyStats apply(List<DataplaneUpdate> batch);

    /**
     * Applies one batch; {@code moreComing}, asked once the driver knows what it would write,
     * says whether more batches are already queued behind this one (a catch-up still streaming
     * in). Then the driver may hold back rewrites the next batches would make again, leaving the
     * kernel in a consistent earlier state of them, and says so with {@link #heldBack()}; the
     * caller applies again (an empty batch when nothing else comes). By default the same as
     * {@link #apply(List)}.
     */
    default ApplyStats apply(List<DataplaneUpdate> batch, BooleanSupplier moreComing) {
        return apply(batch);
    }

    /** {@return whether the last apply held rewrites back} (see {@link #apply(List, BooleanSupplier)}) */
    default boolean heldBack() {
        return false;
    }

    /** Rewrites everything we own from the model, removing anything stale of ours. */
    ApplyStats resync();

    /** Reads the kernel back and repairs what differs from what we programmed; {@return the items repaired}. */
    int refresh();

    /**
     * A read-back whose slow part may run off the calling (dataplane) thread. The future's
     * value is run on the calling thread: it applies the repairs and returns the items
     * repaired, or -1 when a write came in between (nothing done; try again later). By default
     * the whole {@link #refresh()} is that value.
     */
    default java.util.concurrent.CompletableFuture<java.util.function.IntSupplier> refreshLater() {
        return java.util.concurrent.CompletableFuture.completedFuture(this::refresh);
    }

    /** {@return the size of what is programmed} */
    Programmed programmed();

    /** Removes everything we own from the kernel (used when switching backend); the driver is unusable after. */
    void removeAll();

    /**
     * Removes our rules (chains and hook jumps) but keeps our sets, for a backend switch to a
     * driver with the same {@link #setKind()}, which has already replaced those sets and whose
     * rules use them; the driver is unusable after. By default the same as {@link #removeAll()}.
     */
    default void removeRules() {
        removeAll();
    }

    /**
     * {@return which kernel sets the driver programs}: drivers that return the same value program
     * the same sets under the same names (the iptables drivers: {@code ipset}). By default the
     * driver's {@link #name()}: its sets are its own.
     */
    default String setKind() {
        return name();
    }

    /**
     * {@return problems the last apply or link change left unresolved without failing it} (e.g. an
     * interface the driver cannot police, which it holds down): the kernel dataplane records them
     * after a batch, so felix stays not ready until an apply leaves none, while routes go on.
     */
    default List<String> problems() {
        return List.of();
    }

    /** {@return the interfaces the driver holds down because it cannot police them}: nobody else may set them up. */
    default java.util.Set<String> heldDown() {
        return java.util.Set.of();
    }

    /**
     * An interface appeared, changed or went ({@code deleted}); called on the dataplane thread
     * after the routes reacted. Drivers that match interfaces by name need nothing; one that
     * attaches to interfaces (eBPF) acts here, and may throw (recorded, as a failed apply).
     */
    default void onLinkChange(String name, int index, boolean deleted) {
    }

    /** Link announcements were lost (the watcher's socket overflowed): a driver that keeps a view of the links re-reads it. */
    default void onLinksLost() {
    }

    /** Releases what the driver holds outside the kernel's rules (e.g. a libnftables context); rules stay. */
    @Override
    default void close() {
    }

    /** {@return a short name for logs and metrics}: {@code iptables-nft}, {@code iptables-legacy}, {@code nftables} */
    String name();
}
