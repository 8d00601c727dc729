package calico.felix.dataplane.nft;

import calico.dataplane.nft.BaseChain;
import calico.dataplane.nft.NftBatch;
import calico.dataplane.nft.NftElem;
import calico.dataplane.nft.NftExpr;
import calico.dataplane.nft.Nftables;
import calico.dataplane.nft.SetSpec;
import calico.dataplane.nft.TableRef;
import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.PolicyId;
import calico.felix.dataplane.nft.NftRuleFormatter.DispatchMap;
import calico.felix.dataplane.nft.NftRuleFormatter.NftChain;
import calico.felix.dataplane.nft.NftRuleFormatter.NftRule;
import calico.felix.dataplane.nft.NftSetPlan.NftSet;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.RenderCache;
import calico.felix.dataplane.rules.RuleRenderer;
import calico.felix.dataplane.rules.SetPlan;
import calico.felix.dataplane.rules.GenericChain;
import calico.felix.dataplane.rules.GenericRule;
import calico.felix.dataplane.rules.Match;
import calico.felix.dataplane.rules.Names;
import calico.felix.dataplane.rules.PolicyDriver;
import calico.felix.dataplane.rules.Ruleset;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The nftables policy driver. Everything it programs lives in one table of its own, {@code inet
 * calico} ({@link NftNames#TABLE}); no other table is ever named in a command. It keeps a
 * {@link DataplaneModel} fed by the calculation graph's batches, renders it into a {@link
 * Ruleset} (both families: one inet chain serves IPv4 and IPv6), formats that with {@link
 * NftRuleFormatter} and programs it through libnftables, one kernel transaction per call:
 *
 * <ul>
 *   <li>resync (first apply, any apply after a failure): delete and recreate the whole table in
 *       one transaction, so there is never a moment without our rules;
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
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    private static final TableRef TABLE = NftNames.TABLE;
    /** Up to this many members, a set losing members is flushed and refilled rather than edited. */
    private static final int REFILL_LIMIT = 10_000;
    /** Name prefixes of workload endpoint chains, the ones an apply with more coming may hold back. */
    private static final String TO_WORKLOAD = NftNames.chain(Ruleset.Table.FILTER, Names.toWorkload(""));
    private static final String FROM_WORKLOAD = NftNames.chain(Ruleset.Table.FILTER, Names.fromWorkload(""));
    private static final List<String> VERDICTS_WITH_TARGET = List.of("jump", "goto");
    /** One inet chain serves both families. */
    private static final java.util.Set<IpFamily> BOTH = java.util.Collections.unmodifiableSet(
            java.util.EnumSet.allOf(IpFamily.class));

    /** A base chain: its hook and the entry chains it jumps to, in order. */
    record Base(BaseChain spec, List<String> jumps) {
        Base {
            jumps = List.copyOf(jumps);
        }
    }

    /** Everything the model renders to, in kernel names. */
    record Desired(SortedMap<String, NftChain> chains, SortedMap<String, Base> bases, SortedMap<String, NftSet> sets) {
    }

    private final Nftables nft;
    private final Function<DataplaneModel, Ruleset> renderer;
    private final PolicyChains policyChains;
    /** What {@link #desired()} rendered last: which chains exist in which table. */
    private Ruleset lastRendered;
    private int policyRulesApplies;
    private final DataplaneModel model = new DataplaneModel();
    private Desired programmed = new Desired(new TreeMap<>(), new TreeMap<>(), new TreeMap<>());
    /** The state {@link #counts} describes (see {@link #programmed()}). */
    private Desired counted;
    private Programmed counts;
    /**
     * Chains read back by a refresh and found to hold exactly what we wrote: their listing, which the
     * next refresh compares with. A chain written since is absent ("unverified") until a refresh
     * checks it against the rules we sent ({@link NftListedForm}).
     */
    private final Map<String, ArrayNode> listed = new HashMap<>();
    /** Chains the last read-back rewrote without being sure: the next read-back records their listing. */
    private final java.util.Set<String> pendingRecord = new java.util.HashSet<>();
    /** Counts our writes: a background read-back started before one is stale. */
    private long generation;
    /** Lists the table for background read-backs; created at the first one. */
    private NftReader reader;
    /** Formatting is pure: chains and sets whose neutral form did not change reuse their formatted form. */
    private Map<String, Cached<GenericChain, NftChain>> chainCache = new HashMap<>();
    /** Endpoint chains the last apply kept at their programmed rules (see {@link #holdingEndpointChains}). */
    private final java.util.Set<String> held = new java.util.HashSet<>();
    /** Rules formatted for chains that changed, reused by the next chain with the same rule. */
    private final FormattedRules formattedRules = new FormattedRules();
    private Map<String, Cached<SetPlan.DesiredSet, NftSet>> setCache = new HashMap<>();

    private record Cached<K, V>(K key, V value) {
    }

    /** The last planned sets and what they were planned from: reused while neither changes. */
    private SortedMap<String, NftSet> lastSets;
    private Ruleset lastSetInputs;
    private boolean ipSetsChanged = true;
    private boolean inSync;

    /**
     * The driver felix runs: Calico's layout from {@link RuleRenderer}, both families in one table.
     *
     * @param nft a libnftables context opened on the dataplane thread (in the namespace to program)
     */
    public NftablesDataplane(Nftables nft) {
        this(nft, incrementalRenderer(), (m, id, p) -> RuleRenderer.policyChains(m, BOTH, m.settings().forNftables(), id, p));
    }

    /** Renders both families, reusing the chains of everything the model still holds unchanged. */
    private static Function<DataplaneModel, Ruleset> incrementalRenderer() {
        RenderCache cache = new RenderCache();
        // nftablesFilterAllowAction / nftablesFilterDenyAction, not the iptables fields.
        return m -> RuleRenderer.render(m, BOTH, m.settings().forNftables(), cache);
    }

    /**
     * @param nft      a libnftables context opened on the dataplane thread (in the namespace to program)
     * @param renderer model to ruleset; must produce chains for families {V4, V6}
     */
    public NftablesDataplane(Nftables nft, Function<DataplaneModel, Ruleset> renderer) {
        this(nft, renderer, null);
    }

    /** @param policyChains a policy's filter chains as {@code renderer} renders them; null: no policy-only path */
    private NftablesDataplane(Nftables nft, Function<DataplaneModel, Ruleset> renderer, PolicyChains policyChains) {
        this.nft = Objects.requireNonNull(nft, "nft");
        this.renderer = Objects.requireNonNull(renderer, "renderer");
        this.policyChains = policyChains;
    }

    /** A policy's filter-table chains, rendered alone (see {@link RuleRenderer#policyChains}). */
    @FunctionalInterface
    private interface PolicyChains {
        List<GenericChain> render(DataplaneModel model, PolicyId id, CompiledPolicy policy);
    }

    @Override
    public String name() {
        return "nftables";
    }

    @Override
    public void close() {
        if (reader != null) {
            reader.close();
        }
        nft.close();
    }

    @Override
    public ApplyStats apply(List<DataplaneUpdate> batch) {
        return apply(batch, () -> false);
    }

    @Override
    public ApplyStats apply(List<DataplaneUpdate> batch, BooleanSupplier moreComing) {
        try {
            List<PolicyId> rulesOnly = inSync ? policyRulesOnly(batch) : null;
            batch.forEach(model::apply);
            ipSetsChanged |= batch.stream().anyMatch(u -> u instanceof DataplaneUpdate.IpSetUpdate
                    || u instanceof DataplaneUpdate.IpSetDeltaUpdate || u instanceof DataplaneUpdate.IpSetRemove);
            if (rulesOnly != null) {
                ApplyStats s = applyPolicyRules(rulesOnly);
                if (s != null) {
                    return s;
                }
            }
            return inSync ? applyDelta(moreComing) : resync();
        } catch (RuntimeException e) {
            inSync = false;
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
        inSync = false;
        held.clear();
        Desired d = desired();
        NftBatch b = fullBatch(d);
        nft.apply(b);
        programmed = d;
        generation++;
        listed.clear(); // every chain unverified until the next refresh reads it back
        pendingRecord.clear();
        inSync = true;
        log.info("nftables resync: {} chains, {} base chains, {} sets", d.chains().size(), d.bases().size(),
                d.sets().size());
        return new ApplyStats(true, d.chains().size() + d.bases().size(), 0, d.sets().size(), 0);
    }

    /** {@return the one transaction that replaces our table with {@code d}}: delete and recreate it */
    static NftBatch fullBatch(Desired d) {
        NftBatch b = new NftBatch().addTable(TABLE).deleteTable(TABLE).addTable(TABLE);
        d.sets().values().forEach(s -> addSet(b, s));
        d.chains().values().forEach(c -> declare(b, c));
        d.chains().values().forEach(c -> writeRules(b, c));
        d.chains().values().forEach(c -> {
            if (c.map() != null && !c.map().targets().isEmpty()) {
                b.addMapElements(TABLE, c.map().name(), mapEntries(c.map().targets()));
            }
        });
        d.bases().forEach((name, base) -> addBase(b, name, base));
        return b;
    }

    /** {@return what was last programmed} (tests compare it with {@link #desired()}) */
    Desired programmedDesired() {
        return programmed;
    }

    /** {@return how many applies took the policy-rules-only path} (tests) */
    int policyRulesApplies() {
        return policyRulesApplies;
    }

    /** {@return what the model renders to now} (for diagnostics and tests) */
    public Desired desired() {
        Ruleset r = renderer.apply(model);
        lastRendered = r;
        SortedMap<String, NftSet> planned = plannedSets(r);
        if (planned != populatedFrom) {
            populated.retainAll(planned.keySet());
            planned.forEach((name, set) -> {
                if (!set.members().isEmpty()) {
                    populated.add(name);
                }
            });
            populatedFrom = planned;
        }
        SortedMap<String, NftChain> chains = new TreeMap<>();
        Map<String, Cached<GenericChain, NftChain>> nextChains = new HashMap<>();
        Map<String, Pruned> nextPruned = new HashMap<>();
        java.util.Set<String> emptyButNamed = new java.util.HashSet<>();
        r.chains().forEach((table, byName) -> byName.values().forEach(source -> {
            String key = table + "/" + source.name();
            Pruned p = pruned(pruneCache.get(key), source, planned, populated);
            nextPruned.put(key, p);
            emptyButNamed.addAll(p.keptEmpty());
            GenericChain g = p.result();
            Cached<GenericChain, NftChain> hit = chainCache.get(key);
            NftChain c = hit != null && (hit.key() == g || hit.key().equals(g)) ? hit.value()
                    : NftRuleFormatter.chain(table, g, formattedRules::format);
            nextChains.put(key, new Cached<>(g, c));
            if (chains.put(c.name(), c) != null) {
                throw new IllegalStateException("two chains render to the kernel name " + c.name());
            }
        }));
        chainCache = nextChains;
        pruneCache = nextPruned;
        int rules = 0;
        for (NftChain c : chains.values()) {
            rules += c.rules().size();
        }
        formattedRules.trim(rules);
        SortedMap<String, Base> bases = new TreeMap<>();
        for (Ruleset.Entry e : r.entries()) {
            String name = NftNames.baseChain(e.table(), e.hook());
            String target = NftNames.chain(e.table(), e.chain());
            if (!chains.containsKey(target)) {
                throw new IllegalStateException("entry " + e + " names a chain the ruleset does not have");
            }
            Base old = bases.get(name);
            List<String> jumps = new ArrayList<>(old == null ? List.of() : old.jumps());
            jumps.add(target);
            bases.put(name, new Base(baseSpec(e.table(), e.hook()), jumps));
        }
        // Invariant 6: a set that never had members is programmed only while a kept rule names it.
        SortedMap<String, NftSet> sets = new TreeMap<>();
        planned.forEach((name, set) -> {
            if (populated.contains(name) || emptyButNamed.contains(name)) {
                sets.put(name, set);
            }
        });
        return new Desired(chains, bases, java.util.Collections.unmodifiableSortedMap(sets));
    }

    /** Every set {@link SetPlan} gives for {@code r}, empty or not, formatted (reused while no IP set news came). */
    private SortedMap<String, NftSet> plannedSets(Ruleset r) {
        if (!ipSetsChanged && lastSets != null && lastSetInputs.families().equals(r.families())
                && lastSetInputs.graphSetIds().equals(r.graphSetIds()) && lastSetInputs.driverSets().equals(r.driverSets())) {
            return lastSets; // a batch without IP set news: the same sets
        }
        SortedMap<String, NftSet> sets = new TreeMap<>();
        Map<String, Cached<SetPlan.DesiredSet, NftSet>> nextSets = new HashMap<>();
        SetPlan.of(model, r).forEach((name, ds) -> {
            Cached<SetPlan.DesiredSet, NftSet> hit = setCache.get(name);
            NftSet ns = hit != null && hit.key().equals(ds) ? hit.value() : NftSetPlan.of(name, ds);
            nextSets.put(name, new Cached<>(ds, ns));
            sets.put(name, ns);
        });
        setCache = nextSets;
        lastSets = java.util.Collections.unmodifiableSortedMap(sets);
        lastSetInputs = r;
        ipSetsChanged = false;
        return lastSets;
    }

    /**
     * Kernel names of planned sets that have had members since they entered the plan: they stay
     * programmed (and their rules kept) when they empty, so membership churn stays set edits.
     */
    private final java.util.Set<String> populated = new java.util.HashSet<>();
    private SortedMap<String, NftSet> populatedFrom;

    /**
     * A chain without the rules that can never match: those with a positive set match on a set
     * that is empty and never had members (the empty IPv6 twin of an IPv4 set, a selector that has
     * selected nothing yet, a set the graph has not sent). Dropping them keeps the semantics (a
     * rule that does not match has no effect) and keeps those sets, and the rules naming them, out
     * of the kernel, where every commit's validation walk and libnftables' cache pay for each.
     *
     * @param source the chain as rendered
     * @param refs   the kernel names of every set its rules name, in order of appearance
     * @param empty  those of {@code refs} that were empty and unpopulated when {@code result} was made
     * @param keptEmpty empty sets that kept rules still name (negated matches): they stay programmed
     */
    private record Pruned(GenericChain source, List<String> refs, java.util.Set<String> empty, GenericChain result,
                          java.util.Set<String> keptEmpty) {
    }

    /** Chains pruned at the last {@link #desired()}, by table/name: redone only when the chain or its sets' emptiness changed. */
    private Map<String, Pruned> pruneCache = new HashMap<>();

    private static Pruned pruned(Pruned last, GenericChain source, SortedMap<String, NftSet> planned,
                                 java.util.Set<String> populated) {
        boolean sameSource = last != null && (last.source() == source || last.source().equals(source));
        List<String> refs = sameSource ? last.refs() : setRefs(source);
        java.util.Set<String> empty = new java.util.HashSet<>();
        for (String ref : refs) {
            NftSet s = planned.get(ref);
            if (s == null || (s.members().isEmpty() && !populated.contains(ref))) {
                empty.add(ref);
            }
        }
        if (sameSource && last.empty().equals(empty)) {
            return last;
        }
        if (empty.isEmpty() || !(source instanceof GenericChain.Rules rules)) {
            return new Pruned(source, refs, empty, source, java.util.Set.of());
        }
        List<GenericRule> kept = new ArrayList<>(rules.rules().size());
        java.util.Set<String> keptEmpty = new java.util.HashSet<>();
        for (GenericRule rule : rules.rules()) {
            boolean never = false;
            java.util.Set<String> negatedEmpty = new java.util.HashSet<>();
            for (Match m : rule.matches()) {
                String ref = setRef(m);
                if (ref != null && empty.contains(ref)) {
                    if (negated(m)) {
                        negatedEmpty.add(ref);
                    } else {
                        never = true;
                    }
                }
            }
            if (!never) {
                kept.add(rule);
                keptEmpty.addAll(negatedEmpty);
            }
        }
        GenericChain result = kept.size() == rules.rules().size() ? source : new GenericChain.Rules(rules.name(), kept);
        return new Pruned(source, refs, empty, result, java.util.Set.copyOf(keptEmpty));
    }

    private static List<String> setRefs(GenericChain c) {
        if (!(c instanceof GenericChain.Rules rules)) {
            return List.of();
        }
        List<String> out = new ArrayList<>();
        for (GenericRule rule : rules.rules()) {
            for (Match m : rule.matches()) {
                String ref = setRef(m);
                if (ref != null) {
                    out.add(ref);
                }
            }
        }
        return List.copyOf(out);
    }

    /** {@return the kernel name of the set {@code m} names, or null} */
    private static String setRef(Match m) {
        if (m instanceof Match.InSet s) {
            return NftNames.set(s.family(), s.setId());
        } else if (m instanceof Match.NamedPortSet s) {
            return NftNames.set(s.family(), s.setId());
        }
        return null;
    }

    private static boolean negated(Match m) {
        return m instanceof Match.InSet s ? s.negated() : ((Match.NamedPortSet) m).negated();
    }

    /**
     * {@return the policies of {@code batch} (not yet applied to the model) if all it does is
     * change the rules of policies that are programmed, in ways that need no new set}, else null.
     * Then only those policies' filter chains can change: endpoint chains name policies, not
     * their rules, and the sets the rules name are the same, so {@link #applyPolicyRules} may
     * skip rendering and diffing the whole table. A policy that also has raw or mangle copies
     * (host endpoint kinds) takes the whole path.
     */
    private List<PolicyId> policyRulesOnly(List<DataplaneUpdate> batch) {
        if (policyChains == null || lastRendered == null || batch.isEmpty()) {
            return null;
        }
        List<PolicyId> ids = new ArrayList<>(batch.size());
        for (DataplaneUpdate u : batch) {
            if (!(u instanceof DataplaneUpdate.ActivePolicyUpdate p) || p.id().staged()) {
                return null;
            }
            CompiledPolicy old = model.policies().get(p.id());
            if (old == null || !ipSetIds(old).equals(ipSetIds(p.policy()))) {
                return null;
            }
            for (Ruleset.Table t : List.of(Ruleset.Table.RAW, Ruleset.Table.MANGLE)) {
                SortedMap<String, GenericChain> other = lastRendered.chains().get(t);
                if (other != null && (other.containsKey(Names.policyInbound(p.id()))
                        || other.containsKey(Names.policyOutbound(p.id())))) {
                    return null;
                }
            }
            ids.add(p.id());
        }
        return ids;
    }

    private static java.util.Set<String> ipSetIds(CompiledPolicy p) {
        return p.ipSetIds().collect(java.util.stream.Collectors.toSet());
    }

    /**
     * Rewrites the filter chains of {@code ids} (already in the model) that changed, pruned and
     * formatted as {@link #desired()} would, and updates {@link #programmed} and the caches so
     * the next full {@link #desired()} finds them unchanged. {@return null} (nothing written)
     * when a chain is not programmed or its pruning would change which empty sets are
     * programmed: the caller takes the whole path.
     */
    private ApplyStats applyPolicyRules(List<PolicyId> ids) {
        long t0 = System.nanoTime();
        SortedMap<String, NftSet> planned = lastSets;
        if (planned == null || ipSetsChanged) {
            return null;
        }
        Map<String, NftChain> rewritten = new LinkedHashMap<>();
        Map<String, Pruned> prunedNow = new HashMap<>();
        Map<String, Cached<GenericChain, NftChain>> formattedNow = new HashMap<>();
        for (PolicyId id : new java.util.LinkedHashSet<>(ids)) {
            for (GenericChain source : policyChains.render(model, id, model.policies().get(id))) {
                String key = Ruleset.Table.FILTER + "/" + source.name();
                Pruned last = pruneCache.get(key);
                if (last == null) {
                    return null;
                }
                Pruned p = pruned(last, source, planned, populated);
                if (!p.keptEmpty().equals(last.keptEmpty())) {
                    return null;
                }
                Cached<GenericChain, NftChain> hit = chainCache.get(key);
                NftChain c = hit != null && hit.key().equals(p.result()) ? hit.value()
                        : NftRuleFormatter.chain(Ruleset.Table.FILTER, p.result());
                NftChain old = programmed.chains().get(c.name());
                if (old == null) {
                    return null;
                }
                prunedNow.put(key, p);
                formattedNow.put(key, new Cached<>(p.result(), c));
                if (!old.rules().equals(c.rules())) {
                    rewritten.put(c.name(), c);
                }
            }
        }
        pruneCache.putAll(prunedNow);
        chainCache.putAll(formattedNow);
        if (!rewritten.isEmpty()) {
            NftBatch b = new NftBatch();
            rewritten.values().forEach(c -> {
                b.flushChain(TABLE, c.name());
                writeRules(b, c);
            });
            nft.apply(b);
            SortedMap<String, NftChain> chains = new TreeMap<>(programmed.chains());
            chains.putAll(rewritten);
            Desired before = programmed;
            programmed = new Desired(chains, programmed.bases(), programmed.sets());
            if (counted == before) {
                int delta = 0;
                for (NftChain c : rewritten.values()) {
                    delta += c.rules().size() - before.chains().get(c.name()).rules().size();
                }
                counts = new Programmed(counts.chains(), counts.rules() + delta, counts.sets(), counts.setMembers());
                counted = programmed;
            }
            generation++;
            rewritten.keySet().forEach(listed::remove);
            rewritten.keySet().forEach(pendingRecord::remove);
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
        Desired rendered = desired();
        long t1 = System.nanoTime();
        Desired old = programmed;
        held.clear();
        boolean more = moreComing.getAsBoolean();
        Desired d = more ? holdingEndpointChains(rendered, old) : rendered;
        for (NftSet s : d.sets().values()) {
            NftSet o = old.sets().get(s.name());
            if (o != null && !o.sameShape(s)) {
                log.info("nftables: set {} changes type: resyncing", s.name());
                return resync();
            }
        }
        NftBatch b = new NftBatch();
        int setsWritten = 0;
        for (NftSet s : d.sets().values()) {
            NftSet o = old.sets().get(s.name());
            if (o == null) {
                addSet(b, s);
                setsWritten++;
            } else if (!o.members().equals(s.members())) {
                TreeSet<String> gone = new TreeSet<>(o.members());
                gone.removeAll(s.members());
                TreeSet<String> added = new TreeSet<>(s.members());
                added.removeAll(o.members());
                if (!gone.isEmpty() && s.members().size() <= REFILL_LIMIT) {
                    // flush + refill in one transaction: libnftables 1.0.6 needs no element cache for
                    // it, while "delete element" fetches every set's elements first (~0.5 s at 40,000)
                    b.flushSet(TABLE, s.name());
                    addSet(b, s, s.members());
                } else {
                    if (!gone.isEmpty()) {
                        b.deleteElements(TABLE, s.name(), s.elements(gone));
                    }
                    if (!added.isEmpty()) {
                        addSet(b, s, added);
                    }
                }
                setsWritten++;
            }
        }
        List<String> written = new ArrayList<>();
        for (NftChain c : d.chains().values()) {
            NftChain o = old.chains().get(c.name());
            if (o == null) {
                declare(b, c);
            } else if (c.map() != null && (o.map() == null || !o.map().name().equals(c.map().name()))) {
                b.addVerdictMap(TABLE, c.map().name(), SetSpec.of("ifname"));
            }
        }
        for (NftChain c : d.chains().values()) {
            NftChain o = old.chains().get(c.name());
            if (o == null || !o.rules().equals(c.rules())) {
                if (o != null) {
                    b.flushChain(TABLE, c.name());
                }
                writeRules(b, c);
                written.add(c.name());
            }
        }
        for (NftChain c : d.chains().values()) {
            if (c.map() != null && editMap(b, c.map(), mapOf(old.chains().get(c.name())))) {
                setsWritten++;
            }
        }
        d.bases().forEach((name, base) -> {
            Base o = old.bases().get(name);
            if (o == null) {
                addBase(b, name, base);
                written.add(name);
            } else if (!o.spec().equals(base.spec())) {
                b.flushChain(TABLE, name);
                b.deleteChain(TABLE, name);
                addBase(b, name, base);
                written.add(name);
            } else if (!o.jumps().equals(base.jumps())) {
                b.flushChain(TABLE, name);
                base.jumps().forEach(j -> b.addRule(TABLE, name, List.of(NftExpr.jump(j))));
                written.add(name);
            }
        });
        List<String> goneBases = old.bases().keySet().stream().filter(n -> !d.bases().containsKey(n)).toList();
        goneBases.forEach(n -> b.flushChain(TABLE, n).deleteChain(TABLE, n));
        List<String> goneChains = old.chains().keySet().stream().filter(n -> !d.chains().containsKey(n)).toList();
        goneChains.forEach(n -> b.flushChain(TABLE, n));
        old.chains().forEach((n, c) -> {
            DispatchMap now = mapOf(d.chains().get(n));
            if (c.map() != null && (now == null || !now.name().equals(c.map().name()))) {
                b.deleteMap(TABLE, c.map().name());
            }
        });
        goneChains.forEach(n -> b.deleteChain(TABLE, n));
        List<String> goneSets = old.sets().keySet().stream().filter(n -> !d.sets().containsKey(n)).toList();
        goneSets.forEach(n -> b.deleteSet(TABLE, n));

        if (log.isDebugEnabled()) {
            log.debug("nftables apply: rendered in {} µs, diffed in {} µs: {} chains and {} sets to write, {} endpoint "
                    + "chains held back (more coming: {})", (t1 - t0) / 1_000, (System.nanoTime() - t1) / 1_000,
                    written.size(), setsWritten, held.size(), more);
        }
        nft.apply(b);
        programmed = d;
        generation++;
        goneChains.forEach(listed::remove);
        goneBases.forEach(listed::remove);
        written.forEach(listed::remove);
        written.forEach(pendingRecord::remove);
        goneChains.forEach(pendingRecord::remove);
        return new ApplyStats(false, written.size(), goneChains.size() + goneBases.size(), setsWritten,
                goneSets.size());
    }

    /**
     * {@code d} with the workload endpoint chains that changed since {@code old} kept as they are
     * programmed ({@link #held}), for an apply with more updates right behind it. While policies
     * stream in, each apply would rewrite every endpoint chain (each gains the policies that
     * arrived): with 2,000 policies over 1,000 endpoint chains that is ~45,000 rules, ~70 % of the
     * table, per apply, and the last two applies of a catch-up both did it. Holding them back
     * writes them once, when the stream stops. The kernel stays consistent: a held chain keeps
     * jumping only to chains and naming only sets {@code d} still has (else it is written), so an
     * endpoint sees the policies it had, each as it is now; new policy chains are written and wait.
     */
    private Desired holdingEndpointChains(Desired d, Desired old) {
        SortedMap<String, NftChain> chains = null;
        for (NftChain c : d.chains().values()) {
            if (!c.name().startsWith(TO_WORKLOAD) && !c.name().startsWith(FROM_WORKLOAD)) {
                continue;
            }
            NftChain o = old.chains().get(c.name());
            if (o == null || o.rules().equals(c.rules()) || !referencesExist(o, d)) {
                continue;
            }
            if (chains == null) {
                chains = new TreeMap<>(d.chains());
            }
            chains.put(o.name(), o);
            held.add(o.name());
        }
        return chains == null ? d : new Desired(chains, d.bases(), d.sets());
    }

    /** {@return whether every chain {@code c} jumps to and every set it names is in {@code d}} */
    private static boolean referencesExist(NftChain c, Desired d) {
        for (NftRule r : c.rules()) {
            for (ObjectNode e : r.expr()) {
                if (!referencesExist(e, d)) {
                    return false;
                }
            }
        }
        return true;
    }

    private static boolean referencesExist(JsonNode n, Desired d) {
        if (n.isTextual()) {
            String s = n.textValue();
            return !s.startsWith("@") || d.sets().containsKey(s.substring(1));
        }
        if (n.isObject()) {
            for (String verdict : VERDICTS_WITH_TARGET) {
                JsonNode v = n.get(verdict);
                if (v != null && v.has("target") && !d.chains().containsKey(v.get("target").textValue())) {
                    return false;
                }
            }
        }
        for (JsonNode child : n) {
            if (!referencesExist(child, d)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Lists our table and repairs what differs from what we programmed: chains whose rules differ
     * from the listing recorded at an earlier refresh or, for chains written since, from the rules
     * we sent (see {@link NftListedForm}); missing chains; sets and dispatch maps whose elements are
     * not ours; base chains whose hook, policy or jumps changed. Chains, sets and maps in our table
     * that we did not create are deleted. All repairs go in one transaction.
     *
     * @return the number of chains, sets and maps repaired or removed
     */
    @Override
    public int refresh() {
        if (!inSync) {
            ApplyStats s = resync();
            return s.chainsWritten() + s.setsWritten();
        }
        return commit(plan(listOurs(nft), programmed, listed, pendingRecord));
    }

    /**
     * The read-back off the dataplane thread: the listing (the slow part: the whole table through
     * libnftables) and the comparison run on a reader thread of our own (same network namespace,
     * its own libnftables context) against what was programmed when it started; the returned
     * step, run on the dataplane thread, applies the repairs, or returns -1 without touching
     * anything when an apply came in between (the listing may predate it: the caller tries again
     * later). So a change never waits seconds for a read-back of a large table.
     */
    @Override
    public java.util.concurrent.CompletableFuture<java.util.function.IntSupplier> refreshLater() {
        if (!inSync) {
            return java.util.concurrent.CompletableFuture.completedFuture(this::refresh);
        }
        if (reader == null) {
            reader = new NftReader();
        }
        long startedAt = generation;
        Desired snapshot = programmed;
        Map<String, ArrayNode> listedNow = new HashMap<>(listed);
        java.util.Set<String> pendingNow = new java.util.HashSet<>(pendingRecord);
        return reader.submit(readerNft -> plan(listOurs(readerNft), snapshot, listedNow, pendingNow))
                .thenApply(plan -> () -> {
                    if (generation != startedAt || !inSync) {
                        return -1;
                    }
                    return commit(plan);
                });
    }

    /** What one read-back found: the repair batch and what to record; computed without side effects. */
    private record Plan(boolean tableGone, NftBatch batch, List<String> repaired, List<String> rewritten,
                        List<String> strangeChains, List<String> strangeSets, List<String> strangeMaps,
                        Map<String, ArrayNode> verified) {
    }

    /**
     * Compares listing {@code k} with {@code prog}: chains with their recorded listing ({@code
     * listedNow}) or, if written since, with the rules we sent; chains a previous read-back
     * rewrote without being sure ({@code pendingNow}) are recorded as listed. Pure: the caller
     * commits.
     */
    private static Plan plan(Kernel k, Desired prog, Map<String, ArrayNode> listedNow, java.util.Set<String> pendingNow) {
        if (!k.tableExists) {
            return new Plan(true, null, List.of(), List.of(), List.of(), List.of(), List.of(), Map.of());
        }
        Map<String, ArrayNode> verified = new HashMap<>();
        List<String> repaired = new ArrayList<>();
        List<String> rewritten = new ArrayList<>();
        List<String> strangeChains = k.chains.keySet().stream()
                .filter(n -> !prog.chains().containsKey(n) && !prog.bases().containsKey(n)).toList();
        List<String> strangeSets = k.sets.keySet().stream().filter(n -> !prog.sets().containsKey(n)).toList();
        java.util.Set<String> ourMaps = new java.util.HashSet<>();
        prog.chains().values().stream().filter(c -> c.map() != null).forEach(c -> ourMaps.add(c.map().name()));
        List<String> strangeMaps = k.maps.keySet().stream().filter(n -> !ourMaps.contains(n)).toList();

        // 1. Empty strangers' chains and ours that differ; declare ours that are missing.
        NftBatch b = new NftBatch();
        strangeChains.forEach(n -> b.flushChain(TABLE, n));
        prog.chains().forEach((name, c) -> {
            KernelChain kc = k.chains.get(name);
            Verdict v = kc == null ? Verdict.TAMPERED : check(name, c.rules(), kc.rules, listedNow, pendingNow, verified);
            if (v == Verdict.OURS) {
                return;
            }
            if (kc == null) {
                b.addChain(TABLE, name);
            } else {
                b.flushChain(TABLE, name);
            }
            if (v == Verdict.TAMPERED) {
                repaired.add(name);
            }
            rewritten.add(name);
        });
        // 2. Sets and maps before the rules that name them.
        prog.sets().forEach((name, s) -> {
            List<JsonNode> elems = k.sets.get(name);
            if (elems == null || !k.setSpecs.get(name).equals(s.spec())) {
                if (elems != null) {
                    b.deleteSet(TABLE, name); // wrong type: only a stranger's rule can name it now
                }
                addSet(b, s);
                repaired.add(name);
                return;
            }
            TreeSet<String> have = new TreeSet<>();
            elems.forEach(e -> have.add(NftSetPlan.canonical(e, s.namedPorts())));
            if (!have.equals(s.members())) {
                b.flushSet(TABLE, name);
                if (!s.members().isEmpty()) {
                    addSet(b, s, s.members());
                }
                repaired.add(name);
            }
        });
        List<DispatchMap> mapsToFill = new ArrayList<>();
        prog.chains().values().stream().filter(c -> c.map() != null).forEach(c -> {
            DispatchMap m = c.map();
            List<JsonNode> elems = k.maps.get(m.name());
            if (elems == null) {
                b.addVerdictMap(TABLE, m.name(), SetSpec.of("ifname"));
            } else if (!pairs(m.targets()).equals(sortedPairs(elems))) {
                b.flushMap(TABLE, m.name());
            } else {
                return;
            }
            mapsToFill.add(m);
            repaired.add(m.name());
        });
        // 3. Our rules, then map elements (they name chains), then base chains (they jump to ours).
        rewritten.forEach(n -> writeRules(b, prog.chains().get(n)));
        mapsToFill.stream().filter(m -> !m.targets().isEmpty())
                .forEach(m -> b.addMapElements(TABLE, m.name(), mapEntries(m.targets())));
        prog.bases().forEach((name, base) -> {
            KernelChain kc = k.chains.get(name);
            if (kc != null && base.spec().equals(k.bases.get(name))
                    && check(name, jumps(base), kc.rules, listedNow, pendingNow, verified) == Verdict.OURS) {
                return;
            }
            if (kc != null) {
                b.flushChain(TABLE, name);
                b.deleteChain(TABLE, name);
            }
            addBase(b, name, base);
            repaired.add(name);
            rewritten.add(name);
        });
        // 4. Strangers' objects, now that nothing of ours names them.
        strangeChains.forEach(n -> b.deleteChain(TABLE, n));
        strangeMaps.forEach(n -> b.deleteMap(TABLE, n));
        strangeSets.forEach(n -> b.deleteSet(TABLE, n));
        return new Plan(false, b, repaired, rewritten, strangeChains, strangeSets, strangeMaps, verified);
    }

    /** Applies a read-back's repairs and records what it verified; {@return what it repaired or removed}. */
    private int commit(Plan p) {
        if (p.tableGone()) {
            log.warn("nftables refresh: table {} is gone: resyncing", TABLE);
            ApplyStats s = resync();
            return s.chainsWritten() + s.setsWritten();
        }
        listed.putAll(p.verified());
        pendingRecord.removeAll(p.verified().keySet());
        if (p.batch().isEmpty()) {
            return 0;
        }
        if (!p.repaired().isEmpty() || !p.strangeChains().isEmpty() || !p.strangeSets().isEmpty()
                || !p.strangeMaps().isEmpty()) {
            log.warn("nftables refresh: repairing {}; removing strangers' chains {}, sets {}, maps {}", p.repaired(),
                    p.strangeChains(), p.strangeSets(), p.strangeMaps());
        } else {
            log.debug("nftables refresh: rewriting {} chains listed in a form we cannot match to ours", p.rewritten().size());
        }
        try {
            nft.apply(p.batch());
        } catch (RuntimeException e) {
            inSync = false;
            throw e;
        }
        generation++;
        p.strangeChains().forEach(listed::remove);
        // What we just wrote is recorded as listed by the next read-back (no second listing of
        // the whole table here): until then these chains are neither verified nor suspect.
        p.rewritten().forEach(listed::remove);
        pendingRecord.addAll(p.rewritten());
        return p.repaired().size() + p.strangeChains().size() + p.strangeSets().size() + p.strangeMaps().size();
    }

    /**
     * {@inheritDoc} Felix asks after every apply: counted once per programmed state (a walk of
     * every chain and set, ~1 ms at 5,000 chains), and carried forward by the policy-rules-only
     * path, which changes only rule counts.
     */
    @Override
    public Programmed programmed() {
        if (counted != programmed) {
            counts = countsOf(programmed);
            counted = programmed;
        }
        return counts;
    }

    static Programmed countsOf(Desired d) {
        int chains = d.chains().size() + d.bases().size();
        int rules = d.chains().values().stream().mapToInt(c -> c.rules().size()).sum()
                + d.bases().values().stream().mapToInt(b -> b.jumps().size()).sum();
        int members = d.sets().values().stream().mapToInt(s -> s.members().size()).sum();
        return new Programmed(chains, rules, d.sets().size(), members);
    }

    /** Deletes our table (and with it every chain, set and map of ours); the driver is unusable after. */
    @Override
    public void removeAll() {
        nft.apply(new NftBatch().addTable(TABLE).deleteTable(TABLE));
        programmed = new Desired(new TreeMap<>(), new TreeMap<>(), new TreeMap<>());
        generation++;
        listed.clear();
        pendingRecord.clear();
        inSync = false;
    }

    // --- batch building ---

    private static void addSet(NftBatch b, NftSet s) {
        addSet(b, s, s.members());
    }

    /**
     * {@code add set} with {@code members} as its elements: creates the set, or adds to the
     * existing one. libnftables 1.0.6 needs no element cache for this form (an {@code add
     * element} command fetches every set's elements first: ~0.5 s at 40,000 members, against
     * ~10 ms). Our members never overlap (see {@link NftSetPlan}), and the kernel still refuses
     * overlapping intervals.
     */
    private static void addSet(NftBatch b, NftSet s, java.util.Collection<String> members) {
        ObjectNode set = JSON.objectNode().put("family", TABLE.family()).put("table", TABLE.name()).put("name", s.name());
        SetSpec spec = s.spec();
        if (spec.type().size() == 1) {
            set.put("type", spec.type().get(0));
        } else {
            ArrayNode types = set.putArray("type");
            spec.type().forEach(types::add);
        }
        if (spec.interval()) {
            set.putArray("flags").add("interval");
        }
        if (!members.isEmpty()) {
            ArrayNode elem = set.putArray("elem");
            s.elements(members).forEach(elem::add);
        }
        ObjectNode cmd = JSON.objectNode();
        cmd.putObject("add").set("set", set);
        b.raw(cmd); // serialised at once: the elements are not copied
    }

    private static void declare(NftBatch b, NftChain c) {
        b.addChain(TABLE, c.name());
        if (c.map() != null) {
            b.addVerdictMap(TABLE, c.map().name(), SetSpec.of("ifname"));
        }
    }

    private static void writeRules(NftBatch b, NftChain c) {
        for (NftRule r : c.rules()) {
            b.addRule(TABLE, c.name(), r.text(), r.comment());
        }
    }

    private static void addBase(NftBatch b, String name, Base base) {
        b.addChain(TABLE, name, base.spec());
        base.jumps().forEach(j -> b.addRule(TABLE, name, List.of(NftExpr.jump(j))));
    }

    /** Element edits turning map {@code old} (null: new map) into {@code now}; {@return whether any} */
    private static boolean editMap(NftBatch b, DispatchMap now, DispatchMap old) {
        Map<String, String> before = old == null || !old.name().equals(now.name()) ? Map.of() : old.targets();
        List<JsonNode> gone = new ArrayList<>();
        Map<String, String> added = new TreeMap<>();
        before.forEach((iface, target) -> {
            if (!target.equals(now.targets().get(iface))) {
                gone.add(NftElem.ifname(iface));
            }
        });
        now.targets().forEach((iface, target) -> {
            if (!target.equals(before.get(iface))) {
                added.put(iface, target);
            }
        });
        if (!gone.isEmpty()) {
            b.deleteMapElements(TABLE, now.name(), gone);
        }
        if (!added.isEmpty()) {
            b.addMapElements(TABLE, now.name(), mapEntries(added));
        }
        return !gone.isEmpty() || !added.isEmpty();
    }

    private static DispatchMap mapOf(NftChain c) {
        return c == null ? null : c.map();
    }

    private static Map<JsonNode, JsonNode> mapEntries(Map<String, String> targets) {
        Map<JsonNode, JsonNode> out = new LinkedHashMap<>();
        new TreeMap<>(targets).forEach((iface, chain) -> out.put(NftElem.ifname(iface), NftExpr.goTo(chain)));
        return out;
    }

    private static List<JsonNode> pairs(Map<String, String> targets) {
        List<JsonNode> out = new ArrayList<>();
        mapEntries(targets).forEach((k, v) -> out.add(JSON.arrayNode().add(k).add(v)));
        return out;
    }

    private static List<JsonNode> sortedPairs(List<JsonNode> elems) {
        List<JsonNode> out = new ArrayList<>(elems);
        out.sort(java.util.Comparator.comparing(e -> e.get(0).asText()));
        return out;
    }

    /** iptables' tables as nft chain types and priorities (filter 0, nat dstnat/srcnat, mangle -150, raw -300). */
    static BaseChain baseSpec(Ruleset.Table table, Ruleset.Hook hook) {
        String h = hook.name().toLowerCase(java.util.Locale.ROOT);
        return switch (table) {
            case FILTER -> new BaseChain("filter", h, 0, "accept");
            case NAT -> new BaseChain("nat", h,
                    hook == Ruleset.Hook.PREROUTING || hook == Ruleset.Hook.OUTPUT ? -100 : 100, "accept");
            case MANGLE -> new BaseChain("filter", h, -150, "accept");
            case RAW -> new BaseChain("filter", h, -300, "accept");
        };
    }

    // --- reading the kernel back ---

    /** {@return our table as listed}; not existing when the table is gone (other tables are never read) */
    private static Kernel listOurs(Nftables nft) {
        try {
            return Kernel.parse(nft.listTable(TABLE));
        } catch (calico.dataplane.nft.NftablesException e) {
            if (!nft.check(new NftBatch().flushTable(TABLE))) {
                return new Kernel(); // a dry-run flush fails too: the table is gone
            }
            throw e;
        }
    }

    /** What a refresh concludes about one of our chains. */
    private enum Verdict {
        /** Exactly what we wrote. */
        OURS,
        /** Someone changed it (or it is missing): repair and count. */
        TAMPERED,
        /** Written since the last refresh, and listed in words we cannot match to ours: rewrite, do not count. */
        UNSURE
    }

    /**
     * Compares a chain's kernel rules with the listing recorded for it, or (if it was written since
     * the last refresh) with the rules we sent; a verified chain's listing is recorded.
     */
    private static Verdict check(String name, List<NftRule> rules, ArrayNode kernel, Map<String, ArrayNode> listedNow,
                                 java.util.Set<String> pendingNow, Map<String, ArrayNode> verified) {
        ArrayNode recorded = listedNow.get(name);
        if (recorded != null) {
            return kernel.equals(recorded) ? Verdict.OURS : Verdict.TAMPERED;
        }
        if (kernel.size() != rules.size()) {
            return Verdict.TAMPERED;
        }
        if (pendingNow.contains(name) || NftListedForm.listed(kernel).equals(NftListedForm.sent(rules))) {
            // a chain the last read-back rewrote from our rules holds what we wrote: its listing is the reference
            verified.put(name, kernel);
            return Verdict.OURS;
        }
        log.debug("nftables refresh: chain {} lists differently from what we sent: rewriting it", name);
        return Verdict.UNSURE;
    }

    private static List<NftRule> jumps(Base base) {
        return base.jumps().stream().map(j -> new NftRule(List.of(NftExpr.jump(j)), null)).toList();
    }

    /** Our table as libnftables listed it: chains' rules without handles, set and map elements. */
    private static final class Kernel {
        boolean tableExists;
        final Map<String, KernelChain> chains = new TreeMap<>();
        final Map<String, BaseChain> bases = new TreeMap<>();
        final Map<String, List<JsonNode>> sets = new TreeMap<>();
        final Map<String, SetSpec> setSpecs = new TreeMap<>();
        final Map<String, List<JsonNode>> maps = new TreeMap<>();

        static Kernel parse(JsonNode listing) {
            Kernel k = new Kernel();
            for (JsonNode item : listing.path("nftables")) {
                if (item.has("table") && ours(item.get("table"), "name")) {
                    k.tableExists = true;
                } else if (item.has("chain") && ours(item.get("chain"), "table")) {
                    JsonNode c = item.get("chain");
                    k.chains.putIfAbsent(c.get("name").asText(), new KernelChain(JSON.arrayNode()));
                    if (c.has("hook")) {
                        k.bases.put(c.get("name").asText(), new BaseChain(c.path("type").asText(),
                                c.get("hook").asText(), c.path("prio").asInt(), c.path("policy").asText()));
                    }
                } else if (item.has("rule") && ours(item.get("rule"), "table")) {
                    JsonNode r = item.get("rule");
                    ObjectNode rule = JSON.objectNode();
                    rule.set("expr", r.get("expr"));
                    if (r.has("comment")) {
                        rule.set("comment", r.get("comment"));
                    }
                    k.chains.computeIfAbsent(r.get("chain").asText(), n -> new KernelChain(JSON.arrayNode()))
                            .rules.add(rule);
                } else if (item.has("set") && ours(item.get("set"), "table")) {
                    JsonNode s = item.get("set");
                    List<JsonNode> elems = new ArrayList<>();
                    s.path("elem").forEach(elems::add);
                    k.sets.put(s.get("name").asText(), elems);
                    JsonNode type = s.get("type");
                    List<String> types = new ArrayList<>();
                    if (type.isArray()) {
                        type.forEach(t -> types.add(t.asText()));
                    } else {
                        types.add(type.asText());
                    }
                    boolean interval = false;
                    for (JsonNode f : s.path("flags")) {
                        interval |= f.asText().equals("interval");
                    }
                    k.setSpecs.put(s.get("name").asText(), new SetSpec(types, interval));
                } else if (item.has("map") && ours(item.get("map"), "table")) {
                    JsonNode m = item.get("map");
                    List<JsonNode> elems = new ArrayList<>();
                    m.path("elem").forEach(elems::add);
                    k.maps.put(m.get("name").asText(), elems);
                }
            }
            return k;
        }

        private static boolean ours(JsonNode obj, String tableField) {
            return TABLE.family().equals(obj.path("family").asText()) && TABLE.name().equals(obj.path(tableField).asText());
        }
    }

    private record KernelChain(ArrayNode rules) {
    }
}
