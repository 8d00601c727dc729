package calico.felix.dataplane.bpf;

import calico.api.model.Action;
import calico.dataplane.bpf.PolicyMaps;
import calico.dataplane.bpf.PolicyMaps.PortKind;
import calico.dataplane.bpf.PolicyMaps.PortRef;
import calico.dataplane.bpf.PolicyMaps.Rule;
import calico.dataplane.bpf.PolicyMaps.SetKind;
import calico.dataplane.bpf.PolicyMaps.SetRef;
import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.CompiledRule;
import calico.dataplane.bpf.PolicyMaps.Dir;
import calico.felix.calc.DataplaneUpdate.HostEndpointUpdate;
import calico.felix.calc.DataplaneUpdate.WorkloadEndpointUpdate;
import calico.felix.calc.PolicyId;
import calico.felix.calc.TierPolicies;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.EndpointWalk;
import calico.felix.dataplane.rules.GenericRule;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.HitTable;
import calico.felix.dataplane.rules.Match;
import calico.felix.dataplane.rules.NflogPrefix;
import calico.felix.dataplane.rules.NflogPrefix.Verdict;
import calico.felix.dataplane.rules.RuleRenderer;
import calico.felix.dataplane.rules.Target;
import calico.felix.flows.FlowContext;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Compiles the one {@link DataplaneModel} into the BPF policy program's rule tables: per workload
 * interface, one table per direction, in the order every driver shares ({@link EndpointWalk}: tiers,
 * profiles, final deny); here a Pass jumps past its tier's end, or past its profile. A policy's rules are
 * translated from the neutral rules the renderer makes of them ({@link RuleRenderer#rule}), so a
 * match means here what it means to nftables and iptables. Workload tables serve both families:
 * the renderer emits a rule once per family it can match, each entry carries its family (a rule
 * with IPv4 or IPv6 nets, ICMP or an {@code ipVersion}), and the two entries of a rule that differ
 * only by family (a selector's set holds both families' members under one ID) become one entry for
 * both. Host endpoint tables likewise (their failsafe ports, without a net, are one entry for both).
 *
 * <p>Host endpoints (by interface name; the all-interfaces {@code *} one apart, the driver puts it on
 * every other host interface) get up to seven tables, as {@link RuleRenderer} makes their chains:
 * the host's own traffic each way (failsafes first, then policy, profiles, final deny), forwarded
 * traffic each way (applyOnForward policy; none, or a walk that decides nothing: allowed), and the
 * doNotTrack (both ways) and preDNAT (ingress) stages, present only when such policy applies: the
 * failsafes (and, before conntrack, their replies) skip them, a tier's end does not deny, and what
 * decides nothing goes on to the next stage.
 *
 * <p>Sets are named by key ({@code set:<graph id>}, or {@code nets:<cidrs>} for a rule's literal
 * nets) and given numeric IDs by {@link SetIds}; {@link Compiled#sets} lists every key used.
 */
final class TableCompiler {

    /** The tables of one endpoint's interface: a workload's two ({@link Dir#WORKLOAD}), or a host endpoint's. */
    record EndpointTables(String endpointId, boolean host, Map<Dir, List<Rule>> tables) {
        EndpointTables {
            tables = Map.copyOf(tables);
        }

        List<Rule> toEndpoint() {
            return tables.get(Dir.TO_ENDPOINT);
        }

        List<Rule> fromEndpoint() {
            return tables.get(Dir.FROM_ENDPOINT);
        }
    }

    /**
     * What the model compiles to: workload tables by interface name, host endpoint tables by
     * interface name, the all-interfaces endpoint's tables (null: none), the set keys and flow-log
     * prefixes they use.
     */
    record Compiled(TreeMap<String, EndpointTables> byInterface, TreeMap<String, EndpointTables> hosts,
                    EndpointTables allInterfaces, Set<String> sets, Set<String> prefixes) {
    }

    /** How a table ends: {@code NORMAL} profiles and the final deny; {@code FORWARD} allows what no tier decided; {@code STAGE} (doNotTrack, preDNAT) decides nothing at a tier's end. */
    private enum Kind { NORMAL, FORWARD, STAGE }

    /** A JUMP to the end of its table (no verdict: the next stage), patched once the table is complete. */
    private static final int TO_END = -2;

    private final DataplaneModel model;
    private final SetIds ids;
    /** Both families, workload and host endpoint tables alike. */
    private final RuleRenderer renderer;
    private final long acceptBit;
    private final long passBit;
    private Set<String> used = new HashSet<>();
    /** Prefix IDs, null when flow logs are off (then no rule carries a hit and the tables are as without them). */
    private final SetIds prefixIds;
    private Set<String> prefixesUsed = new HashSet<>();
    /** Workload tables of earlier compiles still valid (the driver drops what a batch changed). */
    private final WorkloadTables cache;

    TableCompiler(DataplaneModel model, SetIds ids, SetIds prefixIds) {
        this(model, ids, prefixIds, new WorkloadTables());
    }

    /** @param cache workload tables compiled before with these IDs, reused, and filled with this compile's */
    TableCompiler(DataplaneModel model, SetIds ids, SetIds prefixIds, WorkloadTables cache) {
        this.model = model;
        this.cache = cache;
        this.ids = ids;
        this.prefixIds = model.settings().flowLogs() ? prefixIds : null;
        this.renderer = new RuleRenderer(model.marks(), model.interfacePrefixes(), Set.of(IpFamily.V4, IpFamily.V6),
                model.settings());
        this.acceptBit = model.marks().accept();
        this.passBit = model.marks().pass();
    }

    Compiled compile() {
        TreeMap<String, EndpointTables> out = new TreeMap<>();
        // A workload's table depends on its tiers and profiles only: endpoints selected by the same
        // policies (the 5 of an app, say) share one compile and one list, and a table no change
        // touched since an earlier compile is taken from the cache.
        Set<WorkloadTables.Key> inUse = new java.util.HashSet<>();
        for (WorkloadEndpointUpdate w : model.workloads().values()) {
            out.put(w.interfaceName(), new EndpointTables(w.id(), false, Map.of(
                    Dir.TO_ENDPOINT, workloadTable(new WorkloadTables.Key(w.ingress(), w.profileIds(), true), inUse),
                    Dir.FROM_ENDPOINT, workloadTable(new WorkloadTables.Key(w.egress(), w.profileIds(), false),
                            inUse))));
        }
        cache.retainOnly(inUse); // an unused table's set and prefix IDs may be freed after this compile
        // Of two endpoints on one interface the first by ID wins, as the renderer's (model order is by ID).
        TreeMap<String, EndpointTables> hosts = new TreeMap<>();
        EndpointTables all = null;
        for (HostEndpointUpdate h : new TreeMap<>(model.hostEndpoints()).values()) {
            String i = h.interfaceName();
            if (i == null || i.isBlank()) {
                continue; // found by address only: not programmed, as the renderer's
            }
            if (i.equals("*")) {
                all = all == null ? hostTables(h) : all;
            } else if (!hosts.containsKey(i) && !out.containsKey(i)) {
                hosts.put(i, hostTables(h));
            }
        }
        return new Compiled(out, hosts, all, Set.copyOf(used), Set.copyOf(prefixesUsed));
    }

    /** A workload direction's table, compiled once, with the sets and prefixes it uses recorded for the compile. */
    private List<Rule> workloadTable(WorkloadTables.Key k, Set<WorkloadTables.Key> inUse) {
        boolean first = inUse.add(k);
        WorkloadTables.Table t = cache.get(k);
        if (t == null) {
            Set<String> outerSets = used;
            Set<String> outerPrefixes = prefixesUsed;
            used = new HashSet<>();
            prefixesUsed = new HashSet<>();
            try {
                List<Rule> rules = List.copyOf(table(k.tiers(), k.profiles(), k.inbound(), Kind.NORMAL, List.of()));
                t = new WorkloadTables.Table(rules, Set.copyOf(used), Set.copyOf(prefixesUsed));
            } finally {
                used = outerSets;
                prefixesUsed = outerPrefixes;
            }
            cache.put(k, t);
        }
        if (first) { // endpoints sharing a table add its sets once (thousands of keys an apply otherwise)
            used.addAll(t.sets());
            prefixesUsed.addAll(t.prefixes());
        }
        return t.rules();
    }

    private EndpointTables hostTables(HostEndpointUpdate h) {
        Map<Dir, List<Rule>> t = new EnumMap<>(Dir.class);
        t.put(Dir.HEP_IN, table(h.ingress(), h.profileIds(), true, Kind.NORMAL, failsafes(true, false, Action.Allow)));
        t.put(Dir.HEP_OUT, table(h.egress(), h.profileIds(), false, Kind.NORMAL, failsafes(false, false, Action.Allow)));
        t.put(Dir.HEP_FWD_IN, table(h.forwardIngress(), List.of(), true, Kind.FORWARD, List.of()));
        t.put(Dir.HEP_FWD_OUT, table(h.forwardEgress(), List.of(), false, Kind.FORWARD, List.of()));
        if (!h.untrackedIngress().isEmpty() || !h.untrackedEgress().isEmpty()) {
            t.put(Dir.HEP_UNTRACKED_IN, table(h.untrackedIngress(), List.of(), true, Kind.STAGE,
                    failsafes(true, true, Action.Pass)));
            t.put(Dir.HEP_UNTRACKED_OUT, table(h.untrackedEgress(), List.of(), false, Kind.STAGE,
                    failsafes(false, true, Action.Pass)));
        }
        if (!h.preDnatIngress().isEmpty()) {
            t.put(Dir.HEP_PRE_DNAT_IN, table(h.preDnatIngress(), List.of(), true, Kind.STAGE,
                    failsafes(true, false, Action.Pass)));
        }
        return new EndpointTables(h.id(), true, t);
    }

    /**
     * The failsafe ports' entries: {@code Allow} (the normal tables) or {@code Pass}, a jump to the
     * table's end (the stages: failsafe traffic is decided by the normal table, never by doNotTrack
     * or preDNAT policy); {@code replies}: also the other direction's failsafe replies (before conntrack).
     */
    private List<Rule> failsafes(boolean inbound, boolean replies, Action as) {
        List<Rule> out = new ArrayList<>();
        for (GenericRule g : renderer.failsafes(inbound, replies)) {
            translate(g.matches(), as == Action.Allow ? PolicyMaps.Action.ALLOW : PolicyMaps.Action.JUMP, out);
        }
        if (as == Action.Pass) {
            out.replaceAll(r -> r.withJump(TO_END));
        }
        return out;
    }

    private List<Rule> table(List<TierPolicies> tiers, List<String> profiles, boolean inbound, Kind kind,
                             List<Rule> first) {
        List<Rule> t = new ArrayList<>(first);
        boolean logs = kind != Kind.STAGE; // as NFLOG: Calico logs neither the raw nor the mangle copies
        EndpointWalk.walk(tiers, kind == Kind.NORMAL ? profiles : List.of(), model.policies().keySet(),
                new EndpointWalk() {
            private int start;

            @Override
            public void tierStart(TierPolicies tier) {
                start = t.size();
            }

            @Override
            public void policy(PolicyId id) {
                CompiledPolicy policy = model.policies().get(id);
                rules(inbound ? policy.inbound() : policy.outbound(), t,
                        logs ? (v, i) -> NflogPrefix.policyRule(v, inbound, i, id) : null);
            }

            @Override
            public void missingPolicy(PolicyId id) {
                t.add(Rule.always(PolicyMaps.Action.DENY, 0)
                        .withHit(logs ? hit(NflogPrefix.missingPolicy(inbound, id)) : 0));
            }

            @Override
            public void tierEnd(TierPolicies tier, Action defaultAction) {
                if (kind == Kind.STAGE) {
                    // doNotTrack and preDNAT policy that decides nothing leaves the packet to the next stage.
                    patchPasses(t, start, t.size());
                    return;
                }
                if (defaultAction != Action.Pass) {
                    t.add(Rule.always(PolicyMaps.Action.DENY, 0)
                            .withHit(hit(NflogPrefix.endOfTier(Verdict.DENY, inbound, tier.tier()))));
                } else if (prefixIds != null) {
                    // Logged as NFLOG logs it: a rule that only records the tier's Pass and goes on.
                    t.add(Rule.always(PolicyMaps.Action.JUMP, t.size() + 1)
                            .withHit(hit(NflogPrefix.endOfTier(Verdict.PASS, inbound, tier.tier()))));
                }
                patchPasses(t, start, t.size()); // a Pass continues after the tier's end
            }

            @Override
            public void profile(String id) {
                CompiledPolicy p = model.profiles().get(id);
                if (p != null) {
                    int from = t.size();
                    rules(inbound ? p.inbound() : p.outbound(), t,
                            (v, i) -> NflogPrefix.profileRule(v, inbound, i, id));
                    patchPasses(t, from, t.size()); // a Pass ends that profile
                }
            }

            @Override
            public void end() {
                if (kind == Kind.NORMAL) {
                    t.add(Rule.always(PolicyMaps.Action.DENY, 0).withHit(hit(NflogPrefix.noProfileMatched(inbound))));
                } else if (kind == Kind.FORWARD) {
                    // No applyOnForward policy, or none decided: forwarded traffic is allowed (the renderer's RETURN).
                    t.add(Rule.always(PolicyMaps.Action.ALLOW, 0));
                }
            }
        });
        patchJumps(t, TO_END, t.size());
        if (t.size() > PolicyMaps.MAX_RULES) {
            throw new IllegalArgumentException("a BPF rule table holds at most " + PolicyMaps.MAX_RULES
                    + " rules, this endpoint direction needs " + t.size());
        }
        return t;
    }

    /** Passes (JUMP with target -1) between {@code from} and {@code to} jump to {@code to}. */
    private static void patchPasses(List<Rule> t, int from, int to) {
        for (int i = from; i < to; i++) {
            Rule r = t.get(i);
            if (r.action() == PolicyMaps.Action.JUMP && r.jump() == -1) {
                t.set(i, r.withJump(to));
            }
        }
    }

    /** JUMPs with target {@code placeholder} jump to {@code to}. */
    private static void patchJumps(List<Rule> t, int placeholder, int to) {
        for (int i = 0; i < t.size(); i++) {
            Rule r = t.get(i);
            if (r.action() == PolicyMaps.Action.JUMP && r.jump() == placeholder) {
                t.set(i, r.withJump(to));
            }
        }
    }

    /** How the rules of one policy direction name their flow-log hits: (verdict, rule index) to prefix. */
    private interface Prefixes {
        String prefix(Verdict v, int ruleIndex);
    }

    /**
     * One direction of a policy or profile: the renderer's neutral rules, translated, each with its
     * hit; a rule's IPv4 and IPv6 entries that differ only by family become one entry for both.
     */
    private void rules(List<CompiledRule> rules, List<Rule> out, Prefixes prefixes) {
        for (int i = 0; i < rules.size(); i++) {
            CompiledRule r = rules.get(i);
            Verdict v = HitTable.verdict(r.action());
            int hit = v == null || prefixes == null ? 0 : hit(prefixes.prefix(v, i));
            List<List<Rule>> emitted = new ArrayList<>();
            for (GenericRule g : renderer.rule(r)) {
                PolicyMaps.Action action = action(g.target());
                if (action != null) {
                    List<Rule> entries = new ArrayList<>();
                    translate(g.matches(), action, entries);
                    entries.replaceAll(e -> e.withHit(hit));
                    emitted.add(entries);
                }
            }
            if (emitted.size() == 2 && bothFamilies(emitted.get(0), emitted.get(1))) {
                emitted.get(0).forEach(e -> out.add(e.withFamily(0)));
            } else {
                emitted.forEach(out::addAll);
            }
        }
    }

    /** {@return whether {@code a} and {@code b} are one family's and the other's entries of the same tests} */
    private static boolean bothFamilies(List<Rule> a, List<Rule> b) {
        if (a.size() != b.size() || a.isEmpty()) {
            return false;
        }
        for (int i = 0; i < a.size(); i++) {
            Rule x = a.get(i);
            Rule y = b.get(i);
            if (x.family() == 0 || y.family() == 0 || x.family() == y.family() || x.icmpType() != null
                    || x.notIcmpType() != null || !x.withFamily(0).equals(y.withFamily(0))) {
                return false;
            }
        }
        return true;
    }

    /** {@return the ID of flow-log prefix {@code prefix}}, 0 when flow logs are off */
    private int hit(String prefix) {
        if (prefixIds == null) {
            return 0;
        }
        prefixesUsed.add(prefix);
        return prefixIds.id(prefix);
    }

    /** The verdict a neutral rule gives (Log: none, the walk goes on), or null for bookkeeping (the return on the mark, NFLOG). */
    private PolicyMaps.Action action(Target t) {
        if (t instanceof Target.SetMark m) {
            return m.bits() == acceptBit ? PolicyMaps.Action.ALLOW : m.bits() == passBit ? PolicyMaps.Action.JUMP : null;
        }
        if (t instanceof Target.Drop || t instanceof Target.Reject) {
            return PolicyMaps.Action.DENY; // Reject is the program's setting (cali_cfg), for every deny alike
        }
        return t instanceof Target.Log ? PolicyMaps.Action.LOG : null;
    }

    private void translate(List<Match> matches, PolicyMaps.Action action, List<Rule> out) {
        Integer proto = null;
        Integer notProto = null;
        Integer icmpType = null;
        Integer icmpCode = null;
        Integer notIcmpType = null;
        Integer notIcmpCode = null;
        List<SetRef> sets = new ArrayList<>();
        List<PortRef> positive = new ArrayList<>();
        List<PortRef> negative = new ArrayList<>();
        IpFamily family = matches.stream().filter(m -> m instanceof Match.Family).map(m -> ((Match.Family) m).family())
                .findFirst().orElse(null);
        for (Match m : matches) {
            if (m instanceof Match.Family) {
                continue; // the entry's family, below
            } else if (m instanceof Match.Protocol p) {
                int n = FlowContext.protocolNumber(p.name());
                if (n < 0 || n > 255) {
                    throw new IllegalArgumentException("protocol " + p.name() + " has no number");
                }
                if (p.negated()) {
                    notProto = n;
                } else {
                    proto = n;
                }
            } else if (m instanceof Match.Icmp i) {
                if (family == null) {
                    family = i.family();
                }
                if (i.negated()) {
                    notIcmpType = i.type();
                    notIcmpCode = i.code();
                } else {
                    icmpType = i.type();
                    icmpCode = i.code();
                }
            } else if (m instanceof Match.Nets n) {
                if (family == null) {
                    throw new IllegalArgumentException("nets without the rule's family: " + n);
                }
                IpFamily f = family;
                List<String> own = n.cidrs().stream().filter(c -> IpFamily.of(c) == f).sorted().toList();
                if (own.isEmpty()) {
                    if (!n.negated()) {
                        return; // can match no packet of this family
                    }
                    continue;
                }
                sets.add(new SetRef(ids.id(use("nets:" + String.join(",", own))), SetKind.NET,
                        n.dir() == Match.Dir.DST, n.negated()));
            } else if (m instanceof Match.InSet s) {
                sets.add(new SetRef(ids.id(use("set:" + s.setId())), SetKind.NET, s.dir() == Match.Dir.DST,
                        s.negated()));
            } else if (m instanceof Match.NamedPortSet s) {
                sets.add(new SetRef(ids.id(use("set:" + s.setId())), SetKind.NAMED_PORT, s.dir() == Match.Dir.DST,
                        s.negated()));
            } else if (m instanceof Match.Ports p) {
                boolean dst = p.dir() == Match.Dir.DST;
                PortKind kind = p.negated() ? (dst ? PortKind.NOT_DST : PortKind.NOT_SRC)
                        : (dst ? PortKind.DST : PortKind.SRC);
                for (String port : p.ports()) {
                    String[] lohi = port.split(":", 2);
                    int lo = Integer.parseInt(lohi[0].strip());
                    int hi = lohi.length == 2 ? Integer.parseInt(lohi[1].strip()) : lo;
                    (p.negated() ? negative : positive).add(new PortRef(lo, hi, kind));
                }
            } else {
                throw new IllegalArgumentException("a policy rule match the BPF dataplane cannot express: " + m);
            }
        }
        // Positive port ranges are ORed: more than fit in one entry become several entries with the same action.
        int room = PolicyMaps.RULE_PORTS - negative.size();
        if (room <= 0) {
            throw new IllegalArgumentException("a BPF rule holds at most " + (PolicyMaps.RULE_PORTS - 1)
                    + " negated port ranges, this one " + negative.size());
        }
        int jump = action == PolicyMaps.Action.JUMP ? -1 : 0;
        int i = 0;
        do {
            List<PortRef> ports = new ArrayList<>(negative);
            ports.addAll(positive.subList(i, Math.min(positive.size(), i + room)));
            out.add(new Rule(action, proto, notProto, icmpType, icmpCode, notIcmpType, notIcmpCode, jump, sets, ports, 0,
                    family == null ? 0 : family == IpFamily.V4 ? PolicyMaps.FAMILY_V4 : PolicyMaps.FAMILY_V6));
            i += room;
        } while (i < positive.size());
    }

    private String use(String key) {
        used.add(key);
        return key;
    }
}
