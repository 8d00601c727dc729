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
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Compiles the one {@link DataplaneModel} into the BPF policy program's rule tables: per workload
 * interface, one table per direction, in the order every driver shares ({@link EndpointWalk}: tiers,
 * profiles, final deny); here a Pass jumps past its tier's end, or past its profile. A policy's rules are
 * translated from the neutral rules the renderer makes of them ({@link RuleRenderer#rule}), so a
 * match means here what it means to nftables and iptables. IPv4 only: rules that only match IPv6
 * are left out (the program drops IPv6).
 *
 * <p>Sets are named by key ({@code set:<graph id>}, or {@code nets:<cidrs>} for a rule's literal
 * nets) and given numeric IDs by {@link SetIds}; {@link Compiled#sets} lists every key used.
 */
final class TableCompiler {

    /** The two tables of one endpoint. */
    record EndpointTables(String endpointId, List<Rule> toEndpoint, List<Rule> fromEndpoint) {
    }

    /** What the model compiles to: tables by interface name, the set keys and flow-log prefixes they use. */
    record Compiled(TreeMap<String, EndpointTables> byInterface, Set<String> sets, Set<String> prefixes) {
    }

    private final DataplaneModel model;
    private final SetIds ids;
    private final RuleRenderer renderer;
    private final long acceptBit;
    private final long passBit;
    private final Set<String> used = new TreeSet<>();
    /** Prefix IDs, null when flow logs are off (then no rule carries a hit and the tables are as without them). */
    private final SetIds prefixIds;
    private final Set<String> prefixesUsed = new TreeSet<>();

    TableCompiler(DataplaneModel model, SetIds ids, SetIds prefixIds) {
        this.model = model;
        this.ids = ids;
        this.prefixIds = model.settings().flowLogs() ? prefixIds : null;
        this.renderer = new RuleRenderer(model.marks(), model.interfacePrefixes(), Set.of(IpFamily.V4),
                model.settings());
        this.acceptBit = model.marks().accept();
        this.passBit = model.marks().pass();
    }

    Compiled compile() {
        TreeMap<String, EndpointTables> out = new TreeMap<>();
        for (WorkloadEndpointUpdate w : model.workloads().values()) {
            out.put(w.interfaceName(), new EndpointTables(w.id(), table(w.ingress(), w.profileIds(), true),
                    table(w.egress(), w.profileIds(), false)));
        }
        return new Compiled(out, Set.copyOf(used), Set.copyOf(prefixesUsed));
    }

    private List<Rule> table(List<TierPolicies> tiers, List<String> profiles, boolean inbound) {
        List<Rule> t = new ArrayList<>();
        EndpointWalk.walk(tiers, profiles, model.policies().keySet(), new EndpointWalk() {
            private int start;

            @Override
            public void tierStart(TierPolicies tier) {
                start = t.size();
            }

            @Override
            public void policy(PolicyId id) {
                CompiledPolicy policy = model.policies().get(id);
                rules(inbound ? policy.inbound() : policy.outbound(), t,
                        (v, i) -> NflogPrefix.policyRule(v, inbound, i, id));
            }

            @Override
            public void missingPolicy(PolicyId id) {
                t.add(Rule.always(PolicyMaps.Action.DENY, 0).withHit(hit(NflogPrefix.missingPolicy(inbound, id))));
            }

            @Override
            public void tierEnd(TierPolicies tier, Action defaultAction) {
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
                    rules(inbound ? p.inbound() : p.outbound(), t, (v, i) -> NflogPrefix.profileRule(v, inbound, i, id));
                    patchPasses(t, from, t.size()); // a Pass ends that profile
                }
            }

            @Override
            public void end() {
                t.add(Rule.always(PolicyMaps.Action.DENY, 0).withHit(hit(NflogPrefix.noProfileMatched(inbound))));
            }
        });
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

    /** How the rules of one policy direction name their flow-log hits: (verdict, rule index) to prefix. */
    private interface Prefixes {
        String prefix(Verdict v, int ruleIndex);
    }

    /** One direction of a policy or profile: the renderer's neutral rules, translated, each with its hit. */
    private void rules(List<CompiledRule> rules, List<Rule> out, Prefixes prefixes) {
        for (int i = 0; i < rules.size(); i++) {
            CompiledRule r = rules.get(i);
            Verdict v = HitTable.verdict(r.action());
            int hit = v == null ? 0 : hit(prefixes.prefix(v, i));
            for (GenericRule g : renderer.rule(r)) {
                PolicyMaps.Action action = action(g.target());
                if (action != null) {
                    int from = out.size();
                    translate(g.matches(), action, out);
                    for (int j = from; j < out.size(); j++) {
                        out.set(j, out.get(j).withHit(hit));
                    }
                }
            }
        }
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
        for (Match m : matches) {
            if (m instanceof Match.Family f) {
                if (f.family() != IpFamily.V4) {
                    return; // IPv6 only
                }
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
                if (i.negated()) {
                    notIcmpType = i.type();
                    notIcmpCode = i.code();
                } else {
                    icmpType = i.type();
                    icmpCode = i.code();
                }
            } else if (m instanceof Match.Nets n) {
                List<String> v4 = n.cidrs().stream().filter(c -> IpFamily.of(c) == IpFamily.V4).sorted().toList();
                if (v4.isEmpty()) {
                    if (!n.negated()) {
                        return; // can match no IPv4 packet
                    }
                    continue;
                }
                sets.add(new SetRef(ids.id(use("nets:" + String.join(",", v4))), SetKind.NET,
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
            out.add(new Rule(action, proto, notProto, icmpType, icmpCode, notIcmpType, notIcmpCode, jump, sets, ports));
            i += room;
        } while (i < positive.size());
    }

    private String use(String key) {
        used.add(key);
        return key;
    }
}
