package calico.felix.dataplane.nft;

import calico.dataplane.nft.Nftables;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.PolicyId;
import calico.felix.dataplane.nft.NftRuleFormatter.NftChain;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.PolicyDriver;
import calico.felix.dataplane.rules.RenderCache;
import calico.felix.dataplane.rules.RuleRenderer;
import calico.felix.dataplane.rules.Ruleset;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The nftables policy driver. Everything it programs lives in one table of its own, {@code inet
 * calico} ({@link NftNames#TABLE}); no other table is ever named in a command. It renders the
 * kernel dataplane's one {@link DataplaneModel} (folded before each apply) and coordinates four
 * pieces, one kernel transaction per call:
 *
 * <pre>
 *   model ─► NftDesiredState ─► NftTable (desired) ─┐
 *                                                    ├► NftChangePlanner ─► batch ─► NftCommitter ─► libnftables
 *            NftCommitter.programmed() (NftTable) ───┘                                    │
 *   NftListing (read back) ─► NftVerifier.compare ─► Repair batch ─► NftCommitter ◄────────┘
 * </pre>
 *
 * <ul>
 *   <li>adoption (this driver's first apply, when our table is already there: felix restarted):
 *       compare the table with what the model renders now and repair only the differences, as a
 *       refresh does, so a restart with nothing changed makes no kernel change (counters, rule
 *       handles and the table's text survive);
 *   <li>resync (first apply without a table, any apply after a failure): delete and recreate the
 *       whole table in one transaction, so there is never a moment without our rules;
 *   <li>incremental apply: flush and refill only chains whose rules changed, add/delete set and
 *       verdict-map elements, delete gone chains, maps and sets;
 *   <li>{@link #refresh()}: list the table, compare each chain with its recorded listing (or,
 *       if written since the last refresh, with the rules we sent) and each set/map with our
 *       members, and rewrite what differs.
 * </ul>
 *
 * <p>Base chains: one per (table, hook) of the ruleset's entries, e.g. {@code filter-FORWARD}
 * ({@code type filter hook forward priority filter; policy accept}), holding only jumps to our
 * entry chains. The {@link Nftables} handle acts in the network namespace of the thread using
 * it: the dataplane thread. Not thread-safe.
 */
public final class NftablesDataplane implements PolicyDriver {

    private static final Logger log = LoggerFactory.getLogger(NftablesDataplane.class);
    /** One inet chain serves both families. */
    private static final Set<IpFamily> BOTH = Collections.unmodifiableSet(EnumSet.allOf(IpFamily.class));

    /** The kernel dataplane's one model; its owner folds each batch in before {@link #apply}. */
    private final DataplaneModel model;
    private final NftDesiredState desired;
    private final NftCommitter committer;
    private final NftVerifier verifier = new NftVerifier();
    /** Who hears our libnftables commits and listings (the verifier's reader tells them too). */
    private final calico.dataplane.calls.ToolCalls calls;
    /** Endpoint chains the last apply kept at their programmed rules (nftables-dataplane.md invariant 4b). */
    private final Set<String> held = new HashSet<>();
    private int policyRulesApplies;
    /** Whether this driver has yet to program anything: its first sync adopts a table an earlier felix left. */
    private boolean firstSync = true;

    /**
     * The driver felix runs: Calico's layout from {@link RuleRenderer}, both families in one table.
     *
     * @param nft   a libnftables context opened on the dataplane thread (in the namespace to program)
     * @param model the model this driver renders; its owner folds each batch in before {@link #apply}
     */
    public NftablesDataplane(Nftables nft, DataplaneModel model) {
        this(nft, model, incrementalRenderer(), (m, id, p) -> RuleRenderer.policyChains(m, BOTH,
                m.settings().forNftables(), id, p));
    }

    /** Renders both families, reusing the chains of everything the model still holds unchanged. */
    private static Function<DataplaneModel, Ruleset> incrementalRenderer() {
        RenderCache cache = new RenderCache();
        // nftablesFilterAllowAction / nftablesFilterDenyAction, not the iptables fields.
        return m -> RuleRenderer.render(m, BOTH, m.settings().forNftables(), cache);
    }

    /**
     * @param nft      a libnftables context opened on the dataplane thread (in the namespace to program)
     * @param model    the model this driver renders; its owner folds each batch in before {@link #apply}
     * @param renderer model to ruleset; must produce chains for families {V4, V6}
     */
    public NftablesDataplane(Nftables nft, DataplaneModel model, Function<DataplaneModel, Ruleset> renderer) {
        this(nft, model, renderer, null);
    }

    private NftablesDataplane(Nftables nft, DataplaneModel model, Function<DataplaneModel, Ruleset> renderer,
                              NftDesiredState.PolicyChains policyChains) {
        this.model = java.util.Objects.requireNonNull(model, "model");
        this.committer = new NftCommitter(nft);
        this.calls = nft.calls();
        this.desired = new NftDesiredState(renderer, policyChains);
    }

    @Override
    public String name() {
        return "nftables";
    }

    @Override
    public void close() {
        verifier.close();
        committer.close();
    }

    @Override
    public ApplyStats apply(List<DataplaneUpdate> batch) {
        return apply(batch, () -> false);
    }

    @Override
    public ApplyStats apply(List<DataplaneUpdate> batch, BooleanSupplier moreComing) {
        try {
            List<PolicyId> rulesOnly = committer.inSync() ? desired.policyRulesOnly(model, batch) : null;
            desired.applied(batch);
            if (rulesOnly != null) {
                ApplyStats s = applyPolicyRules(rulesOnly);
                if (s != null) {
                    return s;
                }
            }
            return committer.inSync() ? applyDelta(moreComing) : firstSync ? adopt() : resync();
        } catch (RuntimeException e) {
            committer.outOfSync();
            throw e;
        }
    }

    @Override
    public boolean heldBack() {
        return !held.isEmpty();
    }

    /** Deletes and recreates our table with everything, in one transaction. */
    @Override
    public ApplyStats resync() {
        firstSync = false;
        committer.outOfSync();
        held.clear();
        NftTable d = desired.render(model);
        committer.resync(NftChangePlanner.fullBatch(d), d);
        verifier.forgetAll(); // every chain unverified until the next refresh reads it back
        log.info("nftables resync: {} chains, {} base chains, {} sets", d.chains().size(), d.bases().size(),
                d.sets().size());
        return new ApplyStats(true, d.chains().size() + d.bases().size(), 0, d.sets().size(), 0);
    }

    /**
     * The first sync of a felix that restarted: our table still holds what the last felix programmed.
     * Lists it, compares it with what the model renders now and repairs only what differs (strangers'
     * objects go, as in a refresh); without a table, a full resync.
     */
    private ApplyStats adopt() {
        firstSync = false;
        NftTable d = desired.render(model);
        NftVerifier.Repair r = verifier.compare(committer.nft(), d);
        if (r.tableGone()) {
            return resync();
        }
        held.clear();
        committer.adopt(d);
        verifier.adopt(r, committer);
        log.info("nftables: adopted table {} left by an earlier felix: {} of {} chains rewritten, {} repaired, "
                + "strangers' chains {}, sets {}, maps {} removed", NftNames.TABLE, r.rewritten().size(),
                d.chains().size() + d.bases().size(), r.repaired().size(), r.strangeChains(), r.strangeSets(),
                r.strangeMaps());
        return new ApplyStats(true, r.rewritten().size(), r.strangeChains().size(),
                (int) r.repaired().stream().filter(d.sets()::containsKey).count(), r.strangeSets().size());
    }

    /** {@return what was last programmed} (tests compare it with {@link #desired()}) */
    NftTable programmedDesired() {
        return committer.programmed();
    }

    /** {@return how many applies took the policy-rules-only path} (tests) */
    int policyRulesApplies() {
        return policyRulesApplies;
    }

    /** {@return what the model renders to now} (for diagnostics and tests) */
    NftTable desired() {
        return desired.render(model);
    }

    /**
     * Rewrites the filter chains of {@code ids} (already in the model) that changed (invariant
     * 4a). {@return null} (nothing written) when the planner's render says the whole path must
     * run.
     */
    private ApplyStats applyPolicyRules(List<PolicyId> ids) {
        long t0 = System.nanoTime();
        Map<String, NftChain> rewritten = desired.policyRules(model, ids, committer.programmed());
        if (rewritten == null) {
            return null;
        }
        if (!rewritten.isEmpty()) {
            committer.rewrite(NftChangePlanner.rewrite(rewritten.values()), rewritten);
            verifier.written(rewritten.keySet());
        }
        policyRulesApplies++;
        if (log.isDebugEnabled()) {
            log.debug("nftables apply (policy rules only): {} µs, {} chains written", (System.nanoTime() - t0) / 1_000,
                    rewritten.size());
        }
        return new ApplyStats(false, rewritten.size(), 0, 0, 0);
    }

    private ApplyStats applyDelta(BooleanSupplier moreComing) {
        long t0 = System.nanoTime();
        NftTable rendered = desired.render(model);
        long t1 = System.nanoTime();
        NftTable old = committer.programmed();
        held.clear();
        boolean more = moreComing.getAsBoolean();
        NftTable d = rendered;
        if (more) {
            NftChangePlanner.Holding h = NftChangePlanner.holdingEndpointChains(rendered, old);
            held.addAll(h.held());
            d = h.table();
        }
        NftChangePlanner.Change change = NftChangePlanner.change(d, old);
        if (change instanceof NftChangePlanner.Resync r) {
            log.info("nftables: set {} changes type: resyncing", r.set());
            return resync();
        }
        NftChangePlanner.Edit edit = (NftChangePlanner.Edit) change;
        if (log.isDebugEnabled()) {
            log.debug("nftables apply: rendered in {} µs, diffed in {} µs: {} chains and {} sets to write, {} endpoint "
                    + "chains held back (more coming: {})", (t1 - t0) / 1_000, (System.nanoTime() - t1) / 1_000,
                    edit.written().size(), edit.setsWritten(), held.size(), more);
        }
        committer.commit(edit.batch(), d);
        verifier.written(edit.touched());
        return edit.stats();
    }

    /**
     * Lists our table and repairs what differs from what we programmed (see {@link NftVerifier}):
     * all repairs in one transaction; a table that is gone altogether is resynced.
     *
     * @return the number of chains, sets and maps repaired or removed
     */
    @Override
    public int refresh() {
        if (!committer.inSync()) {
            ApplyStats s = resync();
            return s.chainsWritten() + s.setsWritten();
        }
        return repair(verifier.compare(committer.nft(), committer.programmed()));
    }

    /**
     * The read-back off the dataplane thread: the listing (the slow part: the whole table through
     * libnftables) and the comparison run on a reader thread of our own (same network namespace,
     * its own libnftables context) against what was programmed when it started; the returned
     * step, run on the dataplane thread, applies the repairs, or returns -1 without touching
     * anything when a write came in between (the listing may predate it: the caller tries again
     * later). So a change never waits seconds for a read-back of a large table.
     */
    @Override
    public CompletableFuture<IntSupplier> refreshLater() {
        if (!committer.inSync()) {
            return CompletableFuture.completedFuture(this::refresh);
        }
        long startedAt = committer.generation();
        return verifier.compareLater(committer.programmed(), calls).thenApply(repair -> () -> {
            if (committer.generation() != startedAt || !committer.inSync()) {
                return -1;
            }
            return repair(repair);
        });
    }

    private int repair(NftVerifier.Repair p) {
        if (p.tableGone()) {
            log.warn("nftables refresh: table {} is gone: resyncing", NftNames.TABLE);
            ApplyStats s = resync();
            return s.chainsWritten() + s.setsWritten();
        }
        return verifier.repair(p, committer);
    }

    /**
     * {@inheritDoc} Felix asks after every apply: counted once per programmed state, and carried
     * forward by the policy-rules-only path, which changes only rule counts.
     */
    @Override
    public Programmed programmed() {
        return committer.counts();
    }

    /** Deletes our table (and with it every chain, set and map of ours); the driver is unusable after. */
    @Override
    public void removeAll() {
        committer.removeAll();
        verifier.forgetAll();
    }
}
