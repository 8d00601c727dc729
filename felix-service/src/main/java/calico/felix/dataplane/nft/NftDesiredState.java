package calico.felix.dataplane.nft;

import calico.dataplane.nft.BaseChain;
import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.PolicyId;
import calico.felix.dataplane.nft.NftPruning.Pruned;
import calico.felix.dataplane.nft.NftRuleFormatter.NftChain;
import calico.felix.dataplane.nft.NftRuleFormatter.NftRule;
import calico.felix.dataplane.nft.NftSetPlan.NftSet;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.GenericChain;
import calico.felix.dataplane.rules.GenericRule;
import calico.felix.dataplane.rules.Names;
import calico.felix.dataplane.rules.Ruleset;
import calico.felix.dataplane.rules.SetPlan;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The model rendered into the table we want ({@link NftTable}): the neutral {@link Ruleset},
 * pruned of rules that can never match ({@link NftPruning}), formatted with {@link
 * NftRuleFormatter}, its sets planned with {@link SetPlan}. Rendering is pure, so chains and sets
 * whose neutral form did not change reuse their formatted form from the last render; those caches
 * are the only state here. Also renders the policy-rules-only path's chains (invariant 4a).
 * Never touches the kernel. Not thread-safe (the dataplane thread).
 */
final class NftDesiredState {

    /** A policy's filter-table chains, rendered alone (see {@code RuleRenderer#policyChains}). */
    @FunctionalInterface
    interface PolicyChains {
        List<GenericChain> render(DataplaneModel model, PolicyId id, CompiledPolicy policy);
    }

    private record Cached<K, V>(K key, V value) {
    }

    private final Function<DataplaneModel, Ruleset> renderer;
    private final PolicyChains policyChains;
    /** What {@link #render} rendered last: which chains exist in which table. */
    private Ruleset lastRendered;
    private Map<String, Cached<GenericChain, NftChain>> chainCache = new HashMap<>();
    /** Chains pruned at the last {@link #render}, by table/name: redone only when the chain or its sets' emptiness changed. */
    private Map<String, Pruned> pruneCache = new HashMap<>();
    /** Rules formatted for chains that changed, reused by the next chain with the same rule. */
    private final SetNames setNames = new SetNames();
    private final FormattedRules formattedRules = new FormattedRules(setNames);
    private Map<String, Cached<SetPlan.DesiredSet, NftSet>> setCache = new HashMap<>();
    /** The last planned sets and what they were planned from: reused while neither changes. */
    private SortedMap<String, NftSet> lastSets;
    private Ruleset lastSetInputs;
    private boolean ipSetsChanged = true;
    /**
     * Kernel names of planned sets that have had members since they entered the plan: they stay
     * programmed (and their rules kept) when they empty, so membership churn stays set edits.
     */
    private final Set<String> populated = new HashSet<>();
    private SortedMap<String, NftSet> populatedFrom;

    /**
     * @param renderer     model to ruleset; must produce chains for families {V4, V6}
     * @param policyChains a policy's filter chains as {@code renderer} renders them; null: no policy-rules-only path
     */
    NftDesiredState(Function<DataplaneModel, Ruleset> renderer, PolicyChains policyChains) {
        this.renderer = Objects.requireNonNull(renderer, "renderer");
        this.policyChains = policyChains;
    }

    /** Notes a batch the model has just applied: sets are planned again only after IP set news. */
    void applied(List<DataplaneUpdate> batch) {
        ipSetsChanged |= batch.stream().anyMatch(u -> u instanceof DataplaneUpdate.IpSetUpdate
                || u instanceof DataplaneUpdate.IpSetDeltaUpdate || u instanceof DataplaneUpdate.IpSetRemove);
    }

    /** {@return what {@code model} renders to now} */
    NftTable render(DataplaneModel model) {
        Ruleset r = renderer.apply(model);
        lastRendered = r;
        SortedMap<String, NftSet> planned = plannedSets(model, r);
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
        Set<String> emptyButNamed = new HashSet<>();
        // Chains that share one list of rules (endpoints alike, see RenderCache) are pruned and formatted once.
        Map<List<GenericRule>, Pruned> prunedBodies = new IdentityHashMap<>();
        Map<Ruleset.Table, Map<List<GenericRule>, List<NftRule>>> formattedBodies = new java.util.EnumMap<>(Ruleset.Table.class);
        r.chains().forEach((table, byName) -> byName.values().forEach(source -> {
            String key = table + "/" + source.name();
            Pruned p = pruned(pruneCache.get(key), source, planned, prunedBodies);
            nextPruned.put(key, p);
            emptyButNamed.addAll(p.keptEmpty());
            GenericChain g = p.result();
            Cached<GenericChain, NftChain> hit = chainCache.get(key);
            NftChain c = hit != null && (hit.key() == g || hit.key().equals(g)) ? hit.value()
                    : formatted(table, g, formattedBodies);
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
        SortedMap<String, NftTable.Base> bases = new TreeMap<>();
        for (Ruleset.Entry e : r.entries()) {
            String name = NftNames.baseChain(e.table(), e.hook());
            String target = NftNames.chain(e.table(), e.chain());
            if (!chains.containsKey(target)) {
                throw new IllegalStateException("entry " + e + " names a chain the ruleset does not have");
            }
            NftTable.Base old = bases.get(name);
            List<String> jumps = new ArrayList<>(old == null ? List.of() : old.jumps());
            jumps.add(target);
            bases.put(name, new NftTable.Base(baseSpec(e.table(), e.hook()), jumps));
        }
        // Invariant 6: a set that never had members is programmed only while a kept rule names it.
        SortedMap<String, NftSet> sets = new TreeMap<>();
        planned.forEach((name, set) -> {
            if (populated.contains(name) || emptyButNamed.contains(name)) {
                sets.put(name, set);
            }
        });
        return new NftTable(chains, bases, Collections.unmodifiableSortedMap(sets));
    }

    /** {@return {@code g} formatted}, a list of rules another chain of {@code table} has this render formatted once */
    private NftChain formatted(Ruleset.Table table, GenericChain g,
                               Map<Ruleset.Table, Map<List<GenericRule>, List<NftRule>>> formattedBodies) {
        if (!(g instanceof GenericChain.Rules rules)) {
            return NftRuleFormatter.chain(table, g, formattedRules::format);
        }
        Map<List<GenericRule>, List<NftRule>> bodies = formattedBodies.computeIfAbsent(table, t -> new IdentityHashMap<>());
        List<NftRule> body = bodies.get(rules.rules());
        if (body == null) {
            NftChain c = NftRuleFormatter.chain(table, g, formattedRules::format);
            bodies.put(rules.rules(), c.rules());
            return c;
        }
        return new NftChain(NftNames.chain(table, rules.name()), body, null);
    }

    /**
     * {@link NftPruning#pruned}, or, for a chain whose rules are the very list another chain of this
     * render was pruned with, that pruning under this chain's name (its kept rules the same list
     * too). The twin's pruning was made against the sets as they are now, so {@code last} is not needed.
     */
    private Pruned pruned(Pruned last, GenericChain source, SortedMap<String, NftSet> planned,
                          Map<List<GenericRule>, Pruned> prunedBodies) {
        if (!(source instanceof GenericChain.Rules rules)) {
            return NftPruning.pruned(last, source, planned, populated, setNames);
        }
        Pruned twin = prunedBodies.get(rules.rules());
        if (twin == null) {
            Pruned p = NftPruning.pruned(last, source, planned, populated, setNames);
            prunedBodies.put(rules.rules(), p);
            return p;
        }
        GenericChain result = twin.result() == twin.source() ? source
                : new GenericChain.Rules(source.name(), ((GenericChain.Rules) twin.result()).rules());
        return new Pruned(source, twin.refs(), twin.empty(), result, twin.keptEmpty());
    }

    /** Every set {@link SetPlan} gives for {@code r}, empty or not, formatted (reused while no IP set news came). */
    private SortedMap<String, NftSet> plannedSets(DataplaneModel model, Ruleset r) {
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
        lastSets = Collections.unmodifiableSortedMap(sets);
        lastSetInputs = r;
        ipSetsChanged = false;
        return lastSets;
    }

    /**
     * {@return the policies of {@code batch} (just folded into {@code model}) if all it does is
     * change the rules of policies that are programmed, in ways that need no new set}, else null.
     * Then only those policies' filter chains can change: endpoint chains name policies, not
     * their rules, and the sets the rules name are the same, so {@link #policyRules} may skip
     * rendering and diffing the whole table. A policy that also has raw or mangle copies (host
     * endpoint kinds) takes the whole path.
     */
    List<PolicyId> policyRulesOnly(DataplaneModel model, List<DataplaneUpdate> batch) {
        if (policyChains == null || lastRendered == null || batch.isEmpty()) {
            return null;
        }
        List<PolicyId> ids = new ArrayList<>(batch.size());
        for (DataplaneUpdate u : batch) {
            if (!(u instanceof DataplaneUpdate.ActivePolicyUpdate p) || p.id().staged()) {
                return null;
            }
            CompiledPolicy old = model.policyBeforeLastApply(p.id());
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

    private static Set<String> ipSetIds(CompiledPolicy p) {
        return p.ipSetIds().collect(Collectors.toSet());
    }

    /**
     * Renders the filter chains of {@code ids} (already in {@code model}), pruned and formatted as
     * {@link #render} would, and records them in the caches so the next full render finds them
     * unchanged. {@return the chains whose rules differ from {@code programmed}'s}, by kernel name
     * (empty: nothing to write); null, with no cache touched, when a chain is not programmed or
     * its pruning would change which empty sets are programmed: the caller takes the whole path.
     */
    Map<String, NftChain> policyRules(DataplaneModel model, List<PolicyId> ids, NftTable programmed) {
        SortedMap<String, NftSet> planned = lastSets;
        if (planned == null || ipSetsChanged) {
            return null;
        }
        Map<String, NftChain> rewritten = new LinkedHashMap<>();
        Map<String, Pruned> prunedNow = new HashMap<>();
        Map<String, Cached<GenericChain, NftChain>> formattedNow = new HashMap<>();
        for (PolicyId id : new LinkedHashSet<>(ids)) {
            for (GenericChain source : policyChains.render(model, id, model.policies().get(id))) {
                String key = Ruleset.Table.FILTER + "/" + source.name();
                Pruned last = pruneCache.get(key);
                if (last == null) {
                    return null;
                }
                Pruned p = NftPruning.pruned(last, source, planned, populated, setNames);
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
        return rewritten;
    }

    /** iptables' tables as nft chain types and priorities (filter 0, nat dstnat/srcnat, mangle -150, raw -300). */
    static BaseChain baseSpec(Ruleset.Table table, Ruleset.Hook hook) {
        String h = hook.name().toLowerCase(Locale.ROOT);
        return switch (table) {
            // filter PREROUTING (a workload's egress, rules.md §2b) must see the destination after DNAT (-100)
            case FILTER -> new BaseChain("filter", h, hook == Ruleset.Hook.PREROUTING ? -99 : 0, "accept");
            case NAT -> new BaseChain("nat", h,
                    hook == Ruleset.Hook.PREROUTING || hook == Ruleset.Hook.OUTPUT ? -100 : 100, "accept");
            case MANGLE -> new BaseChain("filter", h, -150, "accept");
            case RAW -> new BaseChain("filter", h, -300, "accept");
        };
    }
}
