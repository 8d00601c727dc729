package calico.felix.dataplane.iptables;

import calico.dataplane.iptables.Ipset;
import calico.dataplane.iptables.IpsetInfo;
import calico.dataplane.iptables.IpsetTransaction;
import calico.dataplane.iptables.IptablesRestore;
import calico.dataplane.iptables.SavedTable;
import calico.dataplane.iptables.Table;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.dataplane.iptables.IptablesSetPlan.DesiredSet;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.PolicyDriver;
import calico.felix.dataplane.rules.RuleSettings;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The iptables dataplane driver: IPv4 through {@code iptables-restore} with {@code cali40} sets
 * and, when {@code ipv6Support} is on (the default), IPv6 through {@code ip6tables-restore} with
 * {@code cali60} sets; the filter and nat tables of each. Renders the kernel dataplane's one
 * {@link DataplaneModel} (folded before each apply) per family with {@link ChainRenderer} and programs
 * the difference from what it last programmed: per batch one {@code ipset restore} creating and
 * filling sets, one {@code <family>-restore --noflush} per family rewriting only changed chains
 * (each table one atomic commit), then one {@code ipset restore} destroying sets no rule uses any
 * more (sets exist before a rule names them and outlive the last rule that did).
 *
 * <p>A coordinator of the same pieces as the nftables driver, each iptables' own:
 * {@link IptablesSetPlan} (the sets the rendering needs), {@link IptablesChangePlanner} (desired
 * against programmed, or against {@code -save} for a resync -> the writes, pure), {@link
 * IptablesCommitter} (runs the tools) and {@link IptablesVerifier} (read-back and repair plan).
 *
 * <p>We own every {@code cali-} chain of the filter and nat tables, every {@code cali40}/{@code cali60}
 * set (and their {@code cali4t}/{@code cali6t} swap temporaries) and exactly one {@code -j cali-X}
 * rule in each kernel chain the ruleset hooks (first under {@code chainInsertMode: Insert}, last
 * under {@code Append}); nothing else is touched. The first batch, a batch after a failure, and a
 * batch that changes the insert mode or {@code ipv6Support} do a {@link #resync()}; the first
 * batch adopts what an earlier felix left, writing only chains whose rules lack our hashes
 * ({@link RuleHashes}) and sets whose members differ. {@link #refresh()}
 * repairs our chains, hooks and sets if someone changed them.
 *
 * <p>Not thread-safe: one dataplane thread calls it, as in felix.
 */
public final class IptablesDataplane implements PolicyDriver {

    private static final Logger log = LoggerFactory.getLogger(IptablesDataplane.class);
    private static final int DEFAULT_MAX_SET_SIZE = 1048576;

    /** Where the last apply's time went (render and format, diff and set planning, ipset restores, iptables restores), in ms. */
    public record Timings(double renderMs, double diffMs, double ipsetMs, double restoreMs) {
    }

    private final IptablesCommitter committer;
    private final IptablesVerifier verifier = new IptablesVerifier();
    private final IptablesSetPlan setPlan = new IptablesSetPlan();
    /** The kernel dataplane's one model; its owner folds each batch in before {@link #apply}. */
    private final DataplaneModel model;
    private final ChainRenderer.Incremental renderer = new ChainRenderer.Incremental();
    /** What each family programmed: chains per table, and the hooks (entries) of the last resync. */
    private final Map<IpFamily, IptablesVerifier.ProgrammedFamily> families = new EnumMap<>(IpFamily.class);
    private Map<String, DesiredSet> programmedSets = Map.of();
    private boolean appendMode;
    /** floatingIPs of the last resync: it adds or removes nat PREROUTING/OUTPUT hooks, which only a resync places. */
    private boolean floatingIps;
    private boolean inSyncWithKernel;
    /** Whether this driver has yet to program anything: its first sync adopts what an earlier felix left. */
    private boolean firstSync = true;
    private Timings lastTimings = new Timings(0, 0, 0, 0);

    /** @param model the model this driver renders; its owner folds each batch in before {@link #apply} */
    public IptablesDataplane(IptablesRestore restore, Ipset ipset, DataplaneModel model) {
        this.committer = new IptablesCommitter(restore, ipset);
        this.model = java.util.Objects.requireNonNull(model, "model");
    }

    /** Programs the model after one batch; the first (or after a failure) rewrites everything we own. */
    @Override
    public ApplyStats apply(List<DataplaneUpdate> batch) {
        try {
            RuleSettings s = model.settings();
            boolean layoutChanged = s.appendMode() != appendMode || families.containsKey(IpFamily.V6) != s.ipv6Support()
                    || model.config().floatingIps() != floatingIps;
            return inSyncWithKernel && !layoutChanged ? applyDelta() : resync(firstSync);
        } catch (RuntimeException e) {
            inSyncWithKernel = false;
            throw e;
        }
    }

    @Override
    public String name() {
        return "iptables-" + committer.backend().name().toLowerCase(Locale.ROOT);
    }

    @Override
    public Programmed programmed() {
        int chains = 0;
        int rules = 0;
        for (IptablesVerifier.ProgrammedFamily st : families.values()) {
            for (Map<String, Chain> t : st.chains().values()) {
                chains += t.size();
                rules += t.values().stream().mapToInt(c -> c.rules().size()).sum();
            }
        }
        int members = programmedSets.values().stream().mapToInt(s -> s.members().size()).sum();
        return new Programmed(chains, rules, programmedSets.size(), members);
    }

    /** {@return the families programmed now}: V4, and V6 unless {@code ipv6Support} is false */
    public Set<IpFamily> families() {
        return Set.copyOf(families.keySet());
    }

    /**
     * Removes, per family and table, every jump of ours from the kernel's chains, then every
     * {@code cali-} chain, then every set of ours (a set in use cannot be destroyed); afterwards
     * this driver must not be used again.
     */
    @Override
    public void removeAll() {
        Set<IpFamily> fs = familiesToRemove();
        fs.forEach(committer::removeFamily);
        IpsetTransaction sets = IpsetTransaction.create();
        committer.listSets().keySet().stream().filter(n -> IptablesSetPlan.ownedSet(n, fs)).forEach(sets::destroy);
        committer.sets(sets);
        families.clear();
        verifier.forgetAll();
        programmedSets = Map.of();
        inSyncWithKernel = false;
    }

    /** Removes our hook jumps and chains from every family's tables and keeps our sets (see {@link PolicyDriver#removeRules()}). */
    @Override
    public void removeRules() {
        familiesToRemove().forEach(committer::removeFamily);
        families.clear();
        verifier.forgetAll();
        inSyncWithKernel = false;
    }

    private Set<IpFamily> familiesToRemove() {
        Set<IpFamily> fs = new TreeSet<>(families.keySet());
        fs.add(IpFamily.V4);
        if (model.settings().ipv6Support()) {
            fs.add(IpFamily.V6);
        }
        return fs;
    }

    /** {@code ipset}: both iptables backends program the same kernel sets. */
    @Override
    public String setKind() {
        return "ipset";
    }

    /** {@return the filter chains the model renders to now in IPv4} (for diagnostics and tests) */
    public Map<String, Chain> desiredChains() {
        return ChainRenderer.render(model).chains();
    }

    /** {@return the chains of one family and table the model renders to now} */
    public Map<String, Chain> desiredChains(IpFamily family, Table table) {
        return ChainRenderer.render(model, family).chains(table);
    }

    private Set<IpFamily> wantedFamilies() {
        return model.settings().ipv6Support() ? Set.of(IpFamily.V4, IpFamily.V6) : Set.of(IpFamily.V4);
    }

    private Map<IpFamily, ChainRenderer.Rendered> renderAll() {
        Map<IpFamily, ChainRenderer.Rendered> out = new EnumMap<>(IpFamily.class);
        wantedFamilies().forEach(f -> out.put(f, renderer.render(model, f)));
        return out;
    }

    /** {@return where the last incremental apply's time went} (for benchmarks and logs). */
    public Timings lastTimings() {
        return lastTimings;
    }

    private ApplyStats applyDelta() {
        long t0 = System.nanoTime();
        Map<IpFamily, ChainRenderer.Rendered> rendered = renderAll();
        long t1 = System.nanoTime();
        Map<String, DesiredSet> sets = setPlan.desiredSets(model, rendered);
        Map<IpFamily, Map<Table, Map<String, Chain>>> programmed = new EnumMap<>(IpFamily.class);
        families.forEach((f, st) -> programmed.put(f, st.chains()));
        IptablesChangePlanner.Change change = IptablesChangePlanner.delta(rendered, programmed, sets, programmedSets,
                maxSize());
        verifier.forget(change.rewritten()); // read back (and checked) by the next refresh
        long t2 = System.nanoTime();
        committer.sets(change.before());
        long t3 = System.nanoTime();
        committer.restores(change.restores());
        long t4 = System.nanoTime();
        committer.sets(change.after());
        long t5 = System.nanoTime();
        lastTimings = new Timings((t1 - t0) / 1e6, (t2 - t1) / 1e6, (t3 - t2 + t5 - t4) / 1e6, (t4 - t3) / 1e6);
        log.debug("iptables apply: {}", lastTimings);
        rendered.forEach((f, r) -> families.put(f, new IptablesVerifier.ProgrammedFamily(r.tables(), families.get(f).entries())));
        programmedSets = sets;
        return change.stats();
    }

    /**
     * Rewrites everything we own from the model: every set replaced (atomically, by swap), every
     * chain of every family rewritten, stale {@code cali-} chains and sets of ours removed, each
     * hooked kernel chain given exactly one jump to our chain in the configured place, and a
     * family no longer wanted ({@code ipv6Support: false}) removed.
     */
    @Override
    public ApplyStats resync() {
        return resync(false);
    }

    /**
     * A resync; with {@code adopt} (the first sync of a felix that restarted) chains whose rules
     * carry our hashes and sets with the right members are kept as they are, so a restart with
     * nothing changed writes nothing ({@link IptablesChangePlanner#resync}).
     */
    private ApplyStats resync(boolean adopt) {
        firstSync = false;
        Map<IpFamily, ChainRenderer.Rendered> rendered = renderAll();
        Map<String, DesiredSet> sets = setPlan.desiredSets(model, rendered);
        boolean append = model.settings().appendMode();
        Map<String, IpsetInfo> kernelSets = committer.listSets();
        Map<IpFamily, Map<Table, SavedTable>> saved = new EnumMap<>(IpFamily.class);
        rendered.keySet().forEach(f -> {
            Map<Table, SavedTable> tables = new EnumMap<>(Table.class);
            IptablesChangePlanner.TABLES.forEach(t -> tables.put(t, committer.save(f, t)));
            saved.put(f, tables);
        });
        IptablesChangePlanner.Change change = IptablesChangePlanner.resync(rendered, saved, kernelSets, sets, append,
                maxSize(), adopt);
        committer.sets(change.before());
        committer.restores(change.restores());
        if (families.containsKey(IpFamily.V6) && !rendered.containsKey(IpFamily.V6)) {
            committer.removeFamily(IpFamily.V6);
            IpsetTransaction v6 = IpsetTransaction.create();
            kernelSets.keySet().stream().filter(n -> IptablesSetPlan.ownedSet(n, Set.of(IpFamily.V6))).forEach(v6::destroy);
            committer.sets(v6);
        }
        committer.sets(change.after());
        families.clear();
        verifier.forgetAll(); // no saved forms yet: the next refresh reads them back
        rendered.forEach((f, r) -> families.put(f, new IptablesVerifier.ProgrammedFamily(r.tables(), r.ruleset().entries())));
        programmedSets = sets;
        appendMode = append;
        floatingIps = model.config().floatingIps();
        inSyncWithKernel = true;
        ApplyStats stats = change.stats();
        log.info("iptables {} ({}): {} chains and {} of {} sets written; removed {} stale chains, {} stale sets",
                adopt ? "adoption of what an earlier felix left" : "resync", rendered.keySet(), stats.chainsWritten(),
                stats.setsWritten(), sets.size(), stats.chainsDeleted(), stats.setsDeleted());
        return stats;
    }

    /**
     * Reads every family's tables back and rewrites any of our chains that are missing or whose
     * rules differ from their recorded saved form, restores each hook jump to its single,
     * configured place, and refills any of our IP sets whose kernel members differ from ours.
     *
     * <p>Writes do not read back (a {@code -save} of a large table costs more than the write): a
     * chain written since the last refresh has no saved form yet. This refresh checks it against
     * our own rendering by the hash comment each rule carries ({@link RuleHashes}: same number of
     * rules, each with the hash we gave it), rewrites it if that fails, and otherwise records what
     * it read as the chain's saved form. So a stranger's edit made between our write and the next
     * refresh that keeps a rule's hash comment but changes its matches (e.g. another port) is
     * adopted; any other edit (a rule added, deleted or replaced, a hook jump deleted) is
     * repaired. {@link calico.felix.dataplane.KernelDataplane} runs a refresh shortly after
     * writes stop, which bounds that window.
     *
     * @return the number of chains and sets repaired, counting each hooked kernel chain fixed as one
     */
    @Override
    public int refresh() {
        if (!inSyncWithKernel) {
            resync();
            return families.values().stream().mapToInt(st -> st.chains().values().stream()
                    .mapToInt(Map::size).sum()).sum();
        }
        IptablesVerifier.Repair repair = verifier.check(committer, families, appendMode, programmedSets, maxSize());
        if (repair.isEmpty()) {
            return 0;
        }
        log.warn("iptables refresh: repairing {}; sets {}", repair.report(), repair.refilled());
        try {
            committer.sets(repair.sets());
            committer.restores(repair.restores());
        } catch (RuntimeException e) {
            inSyncWithKernel = false;
            throw e;
        }
        return repair.count(); // repaired chains are read back by the next refresh
    }

    private int maxSize() {
        return DEFAULT_MAX_SET_SIZE;
    }
}
