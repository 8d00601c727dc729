package calico.felix.dataplane.iptables;

import calico.dataplane.iptables.IpVersion;
import calico.dataplane.iptables.Ipset;
import calico.dataplane.iptables.IpsetFamily;
import calico.dataplane.iptables.IpsetInfo;
import calico.dataplane.iptables.IpsetTransaction;
import calico.dataplane.iptables.IpsetType;
import calico.dataplane.iptables.IptablesRestore;
import calico.dataplane.iptables.RestoreTransaction;
import calico.dataplane.iptables.Rule;
import calico.dataplane.iptables.SavedTable;
import calico.dataplane.iptables.Table;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.IpSetType;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.Names;
import calico.felix.dataplane.rules.PolicyDriver;
import calico.felix.dataplane.rules.RuleSettings;
import calico.felix.dataplane.rules.Ruleset;
import calico.felix.dataplane.rules.SetPlan;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The iptables dataplane driver: IPv4 through {@code iptables-restore} with {@code cali40} sets
 * and, when {@code ipv6Support} is on (the default), IPv6 through {@code ip6tables-restore} with
 * {@code cali60} sets; the filter and nat tables of each. Keeps a {@link DataplaneModel} fed by
 * the calculation graph's batches, renders it per family with {@link ChainRenderer} and programs
 * the difference from what it last programmed: per batch one {@code ipset restore} creating and
 * filling sets, one {@code <family>-restore --noflush} per family rewriting only changed chains
 * (each table one atomic commit), then one {@code ipset restore} destroying sets no rule uses any
 * more (sets exist before a rule names them and outlive the last rule that did).
 *
 * <p>We own every {@code cali-} chain of the filter and nat tables, every {@code cali40}/{@code cali60}
 * set (and their {@code cali4t}/{@code cali6t} swap temporaries) and exactly one {@code -j cali-X}
 * rule in each kernel chain the ruleset hooks (first under {@code chainInsertMode: Insert}, last
 * under {@code Append}); nothing else is touched. The first batch, a batch after a failure, and a
 * batch that changes the insert mode or {@code ipv6Support} do a {@link #resync()}. {@link #refresh()}
 * repairs our chains, hooks and sets if someone changed them.
 *
 * <p>Not thread-safe: one dataplane thread calls it, as in felix.
 */
public final class IptablesDataplane implements PolicyDriver {

    private static final Logger log = LoggerFactory.getLogger(IptablesDataplane.class);
    private static final int DEFAULT_MAX_SET_SIZE = 1048576;
    private static final List<Table> TABLES = List.of(Table.RAW, Table.MANGLE, Table.FILTER, Table.NAT);

    /** Where the last apply's time went (render and format, diff and set planning, ipset restores, iptables restores), in ms. */
    public record Timings(double renderMs, double diffMs, double ipsetMs, double restoreMs) {
    }

    /** A set as we program it: family, type and members in ipset's input syntax. */
    record DesiredSet(IpsetFamily family, IpsetType type, Set<String> members) {
    }

    /** What we programmed in one family's tables. */
    private static final class FamilyState {
        Map<Table, Map<String, Chain>> programmed = Map.of();
        /**
         * Our chains as {@code -save} printed them when a refresh first read them back after our
         * write (and found them plausible): what later refreshes compare to. A chain written since
         * the last read-back has no entry here; see {@link #refresh()}.
         */
        final Map<Table, Map<String, List<String>>> savedForm = new EnumMap<>(Table.class);
        List<Ruleset.Entry> entries = List.of();
    }

    private final IptablesRestore restore;
    private final Ipset ipset;
    private final DataplaneModel model = new DataplaneModel();
    private final ChainRenderer.Incremental renderer = new ChainRenderer.Incremental();
    /** Each graph set's members in one family, as ipset input, while the model holds the same set object. */
    private Map<DataplaneModel.IpSet, Map<IpFamily, Set<String>>> memberCache = new java.util.IdentityHashMap<>();
    private final Map<IpFamily, FamilyState> families = new EnumMap<>(IpFamily.class);
    private Map<String, DesiredSet> programmedSets = Map.of();
    private boolean appendMode;
    private boolean inSyncWithKernel;
    private Timings lastTimings = new Timings(0, 0, 0, 0);

    public IptablesDataplane(IptablesRestore restore, Ipset ipset) {
        this.restore = restore;
        this.ipset = ipset;
    }

    /** Applies one batch from the calculation graph; the first (or after a failure) rewrites everything we own. */
    @Override
    public ApplyStats apply(List<DataplaneUpdate> batch) {
        try {
            batch.forEach(model::apply);
            RuleSettings s = model.settings();
            boolean layoutChanged = s.appendMode() != appendMode || families.containsKey(IpFamily.V6) != s.ipv6Support();
            return inSyncWithKernel && !layoutChanged ? applyDelta() : resync();
        } catch (RuntimeException e) {
            inSyncWithKernel = false;
            throw e;
        }
    }

    @Override
    public String name() {
        return "iptables-" + restore.backend().name().toLowerCase(java.util.Locale.ROOT);
    }

    @Override
    public Programmed programmed() {
        int chains = 0;
        int rules = 0;
        for (FamilyState st : families.values()) {
            for (Map<String, Chain> t : st.programmed.values()) {
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
        Set<IpFamily> fs = new TreeSet<>(families.keySet());
        fs.add(IpFamily.V4);
        if (model.settings().ipv6Support()) {
            fs.add(IpFamily.V6);
        }
        fs.forEach(this::removeFamily);
        IpsetTransaction sets = IpsetTransaction.create();
        ipset.list().keySet().stream().filter(n -> ownedSet(n, fs)).forEach(sets::destroy);
        if (!sets.isEmpty()) {
            ipset.restore(sets);
        }
        families.clear();
        programmedSets = Map.of();
        inSyncWithKernel = false;
    }

    /** Removes our hook jumps and chains from every family's tables and keeps our sets (see {@link PolicyDriver#removeRules()}). */
    @Override
    public void removeRules() {
        Set<IpFamily> fs = new TreeSet<>(families.keySet());
        fs.add(IpFamily.V4);
        if (model.settings().ipv6Support()) {
            fs.add(IpFamily.V6);
        }
        fs.forEach(this::removeFamily);
        families.clear();
        inSyncWithKernel = false;
    }

    /** {@code ipset}: both iptables backends program the same kernel sets. */
    @Override
    public String setKind() {
        return "ipset";
    }

    private void removeFamily(IpFamily f) {
        List<RestoreTransaction> txs = new ArrayList<>();
        for (Table table : TABLES) {
            SavedTable saved = restore.save(version(f), table);
            RestoreTransaction tx = RestoreTransaction.forTable(table);
            saved.policies().forEach((chain, policy) -> {
                if (!policy.equals("-")) {
                    List<String> rules = saved.rules(chain);
                    for (int i = rules.size() - 1; i >= 0; i--) {
                        if (isOurJump(rules.get(i))) {
                            tx.deleteRule(chain, i + 1);
                        }
                    }
                }
            });
            List<String> ours = saved.chains().stream().filter(c -> c.startsWith(Names.CHAIN_PREFIX)).toList();
            ours.forEach(tx::flushChain);
            ours.forEach(tx::deleteChain);
            txs.add(tx);
        }
        restore.apply(version(f), txs);
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

    /**
     * One restore per family. On the nft backend the IPv6 restore runs beside the IPv4 one:
     * {@code ip6tables-nft-restore} needs no xtables lock and each builds its cache of its own
     * family's table, so the two take about as long as the longer one instead of their sum.
     * Legacy restores share the xtables lock, so they stay in turn. The IPv4 error is reported
     * first; as before, a family that succeeded stays committed when the other fails.
     */
    private void applyFamilies(Map<IpFamily, List<RestoreTransaction>> txs) {
        List<RestoreTransaction> v6 = txs.get(IpFamily.V6);
        if (txs.size() < 2 || restore.backend() != calico.dataplane.iptables.IptablesBackend.NFT) {
            txs.forEach((f, t) -> restore.apply(version(f), t));
            return;
        }
        java.util.concurrent.CompletableFuture<Void> six = java.util.concurrent.CompletableFuture.runAsync(
                () -> restore.apply(version(IpFamily.V6), v6), runnable -> {
                    Thread t = new Thread(runnable, Thread.currentThread().getName() + "-ip6tables");
                    t.setDaemon(true);
                    t.start();
                });
        RuntimeException four = null;
        try {
            restore.apply(version(IpFamily.V4), txs.get(IpFamily.V4));
        } catch (RuntimeException e) {
            four = e;
        }
        try {
            six.join();
        } catch (java.util.concurrent.CompletionException e) {
            RuntimeException cause = e.getCause() instanceof RuntimeException re ? re : new IllegalStateException(e.getCause());
            if (four == null) {
                throw cause;
            }
            four.addSuppressed(cause);
        }
        if (four != null) {
            throw four;
        }
    }

    private ApplyStats applyDelta() {
        long t0 = System.nanoTime();
        Map<IpFamily, ChainRenderer.Rendered> rendered = renderAll();
        long t1 = System.nanoTime();
        Map<String, DesiredSet> sets = desiredSets(rendered);

        IpsetTransaction before = IpsetTransaction.create();
        int setsWritten = 0;
        for (Map.Entry<String, DesiredSet> e : sets.entrySet()) {
            DesiredSet old = programmedSets.get(e.getKey());
            DesiredSet now = e.getValue();
            if (old == null || old.type() != now.type() || old.family() != now.family()) {
                before.replace(e.getKey(), now.type(), now.family(), maxSize(), now.members());
                setsWritten++;
            } else if (old.members() != now.members() && !old.members().equals(now.members())) {
                old.members().stream().filter(m -> !now.members().contains(m)).forEach(m -> before.del(e.getKey(), m));
                now.members().stream().filter(m -> !old.members().contains(m)).forEach(m -> before.add(e.getKey(), m));
                setsWritten++;
            }
        }
        Map<IpFamily, List<RestoreTransaction>> txs = new EnumMap<>(IpFamily.class);
        int chainsWritten = 0;
        int chainsDeleted = 0;
        for (ChainRenderer.Rendered r : rendered.values()) {
            FamilyState st = families.get(r.family());
            for (Table table : TABLES) {
                Map<String, Chain> now = r.chains(table);
                Map<String, Chain> old = st.programmed.getOrDefault(table, Map.of());
                RestoreTransaction tx = RestoreTransaction.forTable(table);
                List<String> wt = new ArrayList<>();
                Map<String, List<String>> form = st.savedForm.computeIfAbsent(table, t -> new HashMap<>());
                now.forEach((name, chain) -> {
                    Chain last = old.get(name);
                    if (chain != last && !chain.equals(last)) {
                        write(tx, chain);
                        wt.add(name);
                        form.remove(name); // read back (and checked) by the next refresh
                    }
                });
                List<String> deleted = old.keySet().stream().filter(n -> !now.containsKey(n)).toList();
                deleted.forEach(tx::deleteChain);
                deleted.forEach(form::remove);
                if (!wt.isEmpty() || !deleted.isEmpty()) {
                    txs.computeIfAbsent(r.family(), k -> new ArrayList<>()).add(tx);
                }
                chainsWritten += wt.size();
                chainsDeleted += deleted.size();
            }
        }
        IpsetTransaction after = IpsetTransaction.create();
        List<String> gone = programmedSets.keySet().stream().filter(n -> !sets.containsKey(n)).toList();
        gone.forEach(after::destroy);

        long t2 = System.nanoTime();
        if (!before.isEmpty()) {
            ipset.restore(before);
        }
        long t3 = System.nanoTime();
        applyFamilies(txs);
        long t4 = System.nanoTime();
        if (!after.isEmpty()) {
            ipset.restore(after);
        }
        long t5 = System.nanoTime();
        lastTimings = new Timings((t1 - t0) / 1e6, (t2 - t1) / 1e6, (t3 - t2 + t5 - t4) / 1e6, (t4 - t3) / 1e6);
        log.debug("iptables apply: {}", lastTimings);
        rendered.forEach((f, r) -> families.get(f).programmed = r.tables());
        programmedSets = sets;
        return new ApplyStats(false, chainsWritten, chainsDeleted, setsWritten, gone.size());
    }

    /**
     * Rewrites everything we own from the model: every set replaced (atomically, by swap), every
     * chain of every family rewritten, stale {@code cali-} chains and sets of ours removed, each
     * hooked kernel chain given exactly one jump to our chain in the configured place, and a
     * family no longer wanted ({@code ipv6Support: false}) removed.
     */
    @Override
    public ApplyStats resync() {
        Map<IpFamily, ChainRenderer.Rendered> rendered = renderAll();
        Map<String, DesiredSet> sets = desiredSets(rendered);
        boolean append = model.settings().appendMode();
        Map<String, IpsetInfo> kernelSets = ipset.list();

        IpsetTransaction before = IpsetTransaction.create();
        sets.forEach((name, s) -> before.replace(name, s.type(), s.family(), maxSize(), s.members()));
        Map<IpFamily, List<RestoreTransaction>> txs = new EnumMap<>(IpFamily.class);
        int chains = 0;
        int stale = 0;
        for (ChainRenderer.Rendered r : rendered.values()) {
            List<RestoreTransaction> familyTx = new ArrayList<>();
            for (Table table : TABLES) {
                SavedTable saved = restore.save(version(r.family()), table);
                Map<String, Chain> now = r.chains(table);
                RestoreTransaction tx = RestoreTransaction.forTable(table);
                now.values().forEach(c -> write(tx, c));
                List<String> staleChains = saved.chains().stream()
                        .filter(c -> c.startsWith(Names.CHAIN_PREFIX) && !now.containsKey(c)).toList();
                fixHooks(tx, saved, table, r.ruleset().entries(), append, true);
                staleChains.forEach(tx::deleteChain);
                familyTx.add(tx);
                chains += now.size();
                stale += staleChains.size();
            }
            txs.put(r.family(), familyTx);
        }
        IpsetTransaction after = IpsetTransaction.create();
        List<String> staleSets = kernelSets.keySet().stream()
                .filter(n -> ownedSet(n, rendered.keySet()) && !sets.containsKey(n)).toList();
        staleSets.forEach(after::destroy);

        if (!before.isEmpty()) {
            ipset.restore(before);
        }
        applyFamilies(txs);
        if (families.containsKey(IpFamily.V6) && !rendered.containsKey(IpFamily.V6)) {
            removeFamily(IpFamily.V6);
            IpsetTransaction v6 = IpsetTransaction.create();
            kernelSets.keySet().stream().filter(n -> ownedSet(n, Set.of(IpFamily.V6))).forEach(v6::destroy);
            if (!v6.isEmpty()) {
                ipset.restore(v6);
            }
        }
        if (!after.isEmpty()) {
            ipset.restore(after);
        }
        families.clear();
        rendered.forEach((f, r) -> {
            FamilyState st = new FamilyState();
            st.programmed = r.tables();
            st.entries = r.ruleset().entries();
            families.put(f, st); // no saved forms yet: the next refresh reads them back
        });
        programmedSets = sets;
        appendMode = append;
        inSyncWithKernel = true;
        log.info("iptables resync ({}): {} chains, {} sets; removed {} stale chains, {} stale sets",
                rendered.keySet(), chains, sets.size(), stale, staleSets.size());
        return new ApplyStats(true, chains, stale, sets.size(), staleSets.size());
    }

    /**
     * Reads every family's tables back and rewrites any of our chains that are missing or whose
     * rules differ from their recorded saved form, restores each hook jump to its single,
     * configured place, and refills any of our IP sets whose kernel members differ from ours.
     *
     * <p>Writes do not read back (a {@code -save} of a large table costs more than the write): a
     * chain written since the last refresh has no saved form yet. This refresh checks it against
     * our own rendering, as far as a cheap comparison can (same number of rules, and each rule
     * jumps to the same target), rewrites it if that fails, and otherwise records what it read as
     * the chain's saved form. So a stranger's edit made between our write and the next refresh
     * that keeps a rule's count and target but changes its matches (e.g. another port) is
     * adopted; any other edit (a rule added or deleted, a target changed, a hook jump deleted) is
     * repaired. {@link calico.felix.dataplane.KernelDataplane} runs a refresh shortly after
     * writes stop, which bounds that window.
     *
     * @return the number of chains and sets repaired, counting each hooked kernel chain fixed as one
     */
    @Override
    public int refresh() {
        if (!inSyncWithKernel) {
            resync();
            return families.values().stream().mapToInt(st -> st.programmed.values().stream()
                    .mapToInt(Map::size).sum()).sum();
        }
        int repairs = 0;
        Map<IpFamily, List<RestoreTransaction>> txs = new EnumMap<>(IpFamily.class);
        List<String> report = new ArrayList<>();
        for (Map.Entry<IpFamily, FamilyState> fe : families.entrySet()) {
            IpFamily f = fe.getKey();
            FamilyState st = fe.getValue();
            for (Table table : TABLES) {
                SavedTable saved = restore.save(version(f), table);
                RestoreTransaction tx = RestoreTransaction.forTable(table);
                Map<String, List<String>> form = st.savedForm.getOrDefault(table, Map.of());
                List<String> rt = new ArrayList<>();
                Map<String, List<String>> adopted = new HashMap<>();
                st.programmed.getOrDefault(table, Map.of()).forEach((name, chain) -> {
                    List<String> kernel = saved.policies().containsKey(name) ? saved.rules(name) : null;
                    List<String> known = form.get(name);
                    boolean ok = kernel != null && (known != null ? kernel.equals(known) : plausible(kernel, chain));
                    if (!ok) {
                        write(tx, chain);
                        rt.add(name);
                    } else if (known == null) {
                        adopted.put(name, kernel);
                    }
                });
                st.savedForm.computeIfAbsent(table, t -> new HashMap<>()).putAll(adopted);
                rt.forEach(st.savedForm.get(table)::remove);
                int hooks = fixHooks(tx, saved, table, st.entries, appendMode, false);
                if (!rt.isEmpty() || hooks > 0) {
                    txs.computeIfAbsent(f, k -> new ArrayList<>()).add(tx);
                    report.add(f + "/" + table.kernelName() + ": chains " + rt + ", hooks " + hooks);
                }
                repairs += rt.size() + hooks;
            }
        }
        Map<String, IpsetInfo> kernelSets = ipset.list();
        IpsetTransaction sets = IpsetTransaction.create();
        List<String> refilled = new ArrayList<>();
        programmedSets.forEach((name, s) -> {
            IpsetInfo k = kernelSets.get(name);
            if (k == null || k.type() != s.type() || !k.members().equals(normalised(s))) {
                sets.replace(name, s.type(), s.family(), maxSize(), s.members());
                refilled.add(name);
            }
        });
        if (txs.isEmpty() && refilled.isEmpty()) {
            return 0;
        }
        log.warn("iptables refresh: repairing {}; sets {}", report, refilled);
        try {
            if (!sets.isEmpty()) {
                ipset.restore(sets);
            }
            applyFamilies(txs);
        } catch (RuntimeException e) {
            inSyncWithKernel = false;
            throw e;
        }
        return repairs + refilled.size(); // repaired chains are read back by the next refresh
    }

    /**
     * Gives each kernel chain of {@code table} that the ruleset hooks exactly one {@code -j <ours>},
     * first (insert mode) or last (append mode), and removes our jumps from kernel chains it no
     * longer hooks. A jump is ours when the whole rule is {@code -j cali-…}.
     *
     * @param all whether to consider every built-in chain (resync) or only hooked ones (refresh)
     * @return the number of kernel chains changed
     */
    private static int fixHooks(RestoreTransaction tx, SavedTable saved, Table table, List<Ruleset.Entry> entries,
                                boolean append, boolean all) {
        Map<String, String> wanted = new LinkedHashMap<>();
        entries.stream().filter(e -> ChainRenderer.kernelTable(e.table()) == table)
                .forEach(e -> wanted.put(e.hook().name(), e.chain()));
        Set<String> kernelChains = new TreeSet<>(wanted.keySet());
        if (all) {
            saved.policies().forEach((c, p) -> {
                if (!p.equals("-")) {
                    kernelChains.add(c);
                }
            });
        }
        int changed = 0;
        for (String kc : kernelChains) {
            List<String> rules = saved.rules(kc);
            List<Integer> ours = new ArrayList<>();
            for (int i = 0; i < rules.size(); i++) {
                if (isOurJump(rules.get(i))) {
                    ours.add(i + 1);
                }
            }
            String target = wanted.get(kc);
            boolean ok;
            if (target == null) {
                ok = ours.isEmpty();
            } else {
                int place = append ? rules.size() : 1;
                ok = ours.equals(List.of(place)) && rules.get(place - 1).equals("-j " + target);
            }
            if (ok) {
                continue;
            }
            for (int i = ours.size() - 1; i >= 0; i--) {
                tx.deleteRule(kc, ours.get(i));
            }
            if (target != null) {
                if (append) {
                    tx.appendRule(kc, Rule.of("-j", target));
                } else {
                    tx.insertRule(kc, 1, Rule.of("-j", target));
                }
            }
            changed++;
        }
        return changed;
    }

    private static boolean isOurJump(String savedRule) {
        return savedRule.startsWith("-j " + Names.CHAIN_PREFIX) && savedRule.indexOf(' ', 3) < 0;
    }

    private static void write(RestoreTransaction tx, Chain chain) {
        tx.declareChain(chain.name());
        chain.rules().forEach(rule -> tx.appendRule(chain.name(), rule));
    }

    /**
     * Whether a chain read back from the kernel can be what we wrote: as many rules, each with the
     * same target ({@code -j}/{@code -g} and the word after it). {@code -save} normalises matches
     * (adds {@code -m tcp}, rewrites masks and quoting), so matches are not compared.
     */
    static boolean plausible(List<String> saved, Chain ours) {
        if (saved.size() != ours.rules().size()) {
            return false;
        }
        for (int i = 0; i < saved.size(); i++) {
            if (!target(ours.rules().get(i).args()).equals(savedTarget(saved.get(i)))) {
                return false;
            }
        }
        return true;
    }

    private static String target(List<String> args) {
        for (int i = args.size() - 2; i >= 0; i--) {
            String w = args.get(i);
            if (w.equals("-j") || w.equals("-g")) {
                return w + " " + args.get(i + 1);
            }
        }
        return "";
    }

    /** The target of a {@code -save} rule line: the last {@code -j}/{@code -g} word outside quotes and the word after it. */
    private static String savedTarget(String line) {
        List<String> words = new ArrayList<>();
        StringBuilder w = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (c == '\\' && quoted && i + 1 < line.length()) {
                w.append(line.charAt(++i));
            } else if (c == '"') {
                quoted = !quoted;
            } else if (c == ' ' && !quoted) {
                words.add(w.toString());
                w.setLength(0);
            } else {
                w.append(c);
            }
        }
        words.add(w.toString());
        return target(words);
    }

    /**
     * The sets every family's rules need, as {@link SetPlan} plans them (graph sets split by
     * family, referenced but unsent graph sets empty, the pool sets), and the net sets the
     * formatter made, in ipset syntax. A graph set the model still holds as the same object
     * reuses last time's members (the same instance, so comparing is cheap).
     */
    private Map<String, DesiredSet> desiredSets(Map<IpFamily, ChainRenderer.Rendered> rendered) {
        Map<String, DesiredSet> out = new TreeMap<>();
        Map<DataplaneModel.IpSet, Map<IpFamily, Set<String>>> cache = new java.util.IdentityHashMap<>();
        rendered.forEach((f, r) -> {
            IpsetFamily kf = f == IpFamily.V6 ? IpsetFamily.INET6 : IpsetFamily.INET;
            model.ipSets().forEach((id, s) -> {
                Map<IpFamily, Set<String>> byFamily = cache.computeIfAbsent(s,
                        k -> memberCache.getOrDefault(k, new EnumMap<>(IpFamily.class)));
                Set<String> members = byFamily.computeIfAbsent(f, k -> {
                    int v = k == IpFamily.V6 ? 6 : 4;
                    Set<String> m = new TreeSet<>();
                    s.members().forEach(x -> {
                        if (x.cidr().version() == v) {
                            m.add(x.toString());
                        }
                    });
                    return java.util.Collections.unmodifiableSet(m);
                });
                out.put(Names.ipSet(f, id), new DesiredSet(kf, kernelType(s.type()), members));
            });
            SetPlan.of(EMPTY, r.ruleset()).forEach((name, s) -> {
                if (!out.containsKey(name)) { // unsent graph sets (empty) and the driver's pool sets
                    Set<String> members = new TreeSet<>();
                    s.members().forEach(m -> members.add(m.toString()));
                    out.put(name, new DesiredSet(kf, kernelType(s.type()), members));
                }
            });
            r.netSets().forEach((name, members) -> out.put(name, new DesiredSet(kf, IpsetType.HASH_NET, members)));
        });
        memberCache = cache;
        return out;
    }

    /** A model without graph sets: {@link SetPlan} over it plans only the unsent and driver sets. */
    private static final DataplaneModel EMPTY = new DataplaneModel();

    /** Whether a kernel set is ours in one of {@code fs}: its family prefix or its swap temporary's. */
    private static boolean ownedSet(String name, Set<IpFamily> fs) {
        return (fs.contains(IpFamily.V4) && (name.startsWith(Names.IPSET_V4_PREFIX)
                || name.startsWith(Names.IPSET_V4_TEMP_PREFIX)))
                || (fs.contains(IpFamily.V6) && (name.startsWith(Names.IPSET_V6_PREFIX)
                || name.startsWith(Names.IPSET_V6_TEMP_PREFIX)));
    }

    /** Our members as {@code ipset save} prints them: a hash:net host entry loses its {@code /32} or {@code /128}. */
    private static Set<String> normalised(DesiredSet s) {
        Set<String> out = new TreeSet<>();
        s.members().forEach(m -> {
            if (m.endsWith("/32") && s.family() == IpsetFamily.INET) {
                out.add(m.substring(0, m.length() - 3));
            } else if (m.endsWith("/128") && s.family() == IpsetFamily.INET6) {
                out.add(m.substring(0, m.length() - 4));
            } else {
                out.add(m);
            }
        });
        return out;
    }

    private static IpVersion version(IpFamily f) {
        return f == IpFamily.V6 ? IpVersion.V6 : IpVersion.V4;
    }

    private static IpsetType kernelType(IpSetType t) {
        return t == IpSetType.IP_AND_PORT ? IpsetType.HASH_IP_PORT : IpsetType.HASH_NET;
    }

    private int maxSize() {
        return DEFAULT_MAX_SET_SIZE;
    }
}
