package calico.felix.dataplane.rules;

import calico.api.model.Action;
import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.CompiledRule;
import calico.felix.calc.DataplaneUpdate.WorkloadEndpointUpdate;
import calico.felix.calc.PolicyId;
import calico.felix.calc.TierPolicies;
import calico.felix.dataplane.rules.GenericChain.Dispatch;
import calico.felix.dataplane.rules.GenericChain.Rules;
import calico.felix.dataplane.rules.Match.Dir;
import calico.felix.dataplane.rules.Ruleset.Entry;
import calico.felix.dataplane.rules.Ruleset.Hook;
import calico.felix.dataplane.rules.Ruleset.Table;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Renders a {@link DataplaneModel} into Calico's chain layout as a backend-neutral
 * {@link Ruleset}; the iptables and nftables drivers only format it. Layout (filter table):
 *
 * <pre>
 * FORWARD -> cali-FORWARD: clear marks; (-i cali+) cali-from-wl-dispatch; (-o cali+) cali-to-wl-dispatch;
 *                          accept mark set: ACCEPT
 * cali-from-wl-dispatch / cali-to-wl-dispatch: by interface, goto cali-fw-&lt;if&gt; / cali-tw-&lt;if&gt;; unknown: DROP
 * cali-tw/fw-&lt;if&gt;: clear marks; ct established/related ACCEPT; ct invalid DROP;
 *   per enforced tier: clear pass; per policy: (pass clear) jump cali-pi/po-&lt;id&gt;, accept set: RETURN;
 *   end of tier: pass clear -> DROP (unless the tier's default is Pass);
 *   per profile: jump cali-pri/pro-&lt;name&gt;, accept set: RETURN; finally DROP.
 * </pre>
 *
 * <p>Families: a ruleset serves the families it is asked for (iptables renders one per table,
 * an nftables {@code inet} table both). A rule that names addresses, sets, ICMP or an IP version
 * is emitted once per family it can match, with a {@link Match.Family}; a rule whose nets are all
 * of another family is left out of that family (it can never match there); other rules serve all.
 *
 * <p>A rule whose side has several numeric-port lists or named-port sets (alternatives) becomes
 * one generic rule per combination.
 */
public final class RuleRenderer {

    private final MarkBits marks;
    private final String interfacePrefix;
    private final Set<IpFamily> families;

    public RuleRenderer(MarkBits marks, String interfacePrefix, Set<IpFamily> families) {
        if (families.isEmpty()) {
            throw new IllegalArgumentException("families: at least one");
        }
        this.marks = marks;
        this.interfacePrefix = interfacePrefix;
        this.families = Set.copyOf(families);
    }

    /** Renders the whole model for {@code families}. */
    public static Ruleset render(DataplaneModel model, Set<IpFamily> families) {
        return new RuleRenderer(model.marks(), model.interfacePrefix(), families).renderAll(model);
    }

    Ruleset renderAll(DataplaneModel model) {
        SortedMap<String, GenericChain> filter = new TreeMap<>();
        Set<String> refs = new TreeSet<>();
        add(filter, forwardChain());
        List<WorkloadEndpointUpdate> weps = model.workloads().values().stream()
                .filter(w -> w.interfaceName() != null && !w.interfaceName().isBlank())
                .sorted(Comparator.comparing(WorkloadEndpointUpdate::interfaceName)).toList();
        add(filter, dispatch(Names.FROM_WL_DISPATCH, true, weps));
        add(filter, dispatch(Names.TO_WL_DISPATCH, false, weps));
        Set<PolicyId> existing = model.policies().keySet();
        for (WorkloadEndpointUpdate w : weps) {
            add(filter, endpointChain(Names.toWorkload(w.interfaceName()), w.ingress(), w.profileIds(), true, existing));
            add(filter, endpointChain(Names.fromWorkload(w.interfaceName()), w.egress(), w.profileIds(), false,
                    existing));
        }
        model.policies().forEach((id, p) -> {
            if (!id.staged()) {
                addPolicy(filter, Names.policyInbound(id), Names.policyOutbound(id), p, refs);
            }
        });
        model.profiles().forEach((name, p) ->
                addPolicy(filter, Names.profileInbound(name), Names.profileOutbound(name), p, refs));
        return new Ruleset(families, java.util.Map.of(Table.FILTER, filter),
                List.of(new Entry(Table.FILTER, Hook.FORWARD, Names.FORWARD)), new TreeMap<>(), refs);
    }

    private void addPolicy(SortedMap<String, GenericChain> chains, String in, String out, CompiledPolicy p,
                           Set<String> refs) {
        add(chains, new Rules(in, rules(p.inbound())));
        add(chains, new Rules(out, rules(p.outbound())));
        p.ipSetIds().forEach(refs::add);
    }

    private static void add(SortedMap<String, GenericChain> chains, GenericChain c) {
        if (chains.put(c.name(), c) != null) {
            throw new IllegalStateException("two chains render to the name " + c.name());
        }
    }

    Rules forwardChain() {
        return new Rules(Names.FORWARD, List.of(
                GenericRule.of(new Target.ClearMark(marks.both())),
                GenericRule.of(new Target.Jump(Names.FROM_WL_DISPATCH), new Match.Interface(true, interfacePrefix, true)),
                GenericRule.of(new Target.Jump(Names.TO_WL_DISPATCH), new Match.Interface(false, interfacePrefix, true)),
                GenericRule.of(Target.ACCEPT, new Match.MarkAllSet(marks.accept()))));
    }

    /** Unknown interfaces of ours are dropped: an endpoint without its chains must not pass. */
    static Dispatch dispatch(String name, boolean in, List<WorkloadEndpointUpdate> weps) {
        SortedMap<String, String> targets = new TreeMap<>();
        weps.forEach(w -> targets.put(w.interfaceName(),
                in ? Names.fromWorkload(w.interfaceName()) : Names.toWorkload(w.interfaceName())));
        return new Dispatch(name, in, targets, Target.DROP);
    }

    /**
     * One direction of an endpoint.
     *
     * @param inbound  towards the endpoint (its ingress): policies' and profiles' inbound chains
     * @param existing policies the model holds; a listed policy missing from it fails closed (DROP)
     */
    public Rules endpointChain(String name, List<TierPolicies> tiers, List<String> profiles, boolean inbound,
                               Set<PolicyId> existing) {
        Match passClear = new Match.MarkAllClear(marks.pass());
        Match acceptSet = new Match.MarkAllSet(marks.accept());
        List<GenericRule> rules = new ArrayList<>();
        rules.add(GenericRule.of(new Target.ClearMark(marks.both())));
        rules.add(GenericRule.of(Target.ACCEPT,
                new Match.Conntrack(Set.of(Match.CtState.RELATED, Match.CtState.ESTABLISHED))));
        rules.add(GenericRule.of(Target.DROP, new Match.Conntrack(Set.of(Match.CtState.INVALID))));
        for (TierPolicies tier : tiers) {
            if (!tier.enforced()) {
                continue;
            }
            rules.add(GenericRule.of(new Target.ClearMark(marks.pass())).withComment("start of tier " + tier.tier()));
            for (PolicyId p : tier.policies()) {
                if (p.staged()) {
                    continue;
                }
                if (!existing.contains(p)) {
                    rules.add(GenericRule.of(Target.DROP, passClear).withComment("missing policy " + p.sortName()));
                    continue;
                }
                String target = inbound ? Names.policyInbound(p) : Names.policyOutbound(p);
                rules.add(GenericRule.of(new Target.Jump(target), passClear));
                rules.add(GenericRule.of(Target.RETURN, acceptSet));
            }
            Action def = tier.missing() || tier.defaultAction() == null ? Action.Deny : tier.defaultAction();
            if (def != Action.Pass) {
                rules.add(GenericRule.of(Target.DROP, passClear).withComment("end of tier " + tier.tier()));
            }
        }
        for (String profile : profiles) {
            rules.add(GenericRule.of(new Target.Jump(inbound ? Names.profileInbound(profile)
                    : Names.profileOutbound(profile))));
            rules.add(GenericRule.of(Target.RETURN, acceptSet));
        }
        rules.add(GenericRule.of(Target.DROP).withComment("no policy or profile accepted"));
        return new Rules(name, rules);
    }

    /** A policy's or profile's rules for one direction, in order. */
    public List<GenericRule> rules(List<CompiledRule> compiled) {
        List<GenericRule> out = new ArrayList<>();
        compiled.forEach(r -> out.addAll(rule(r)));
        return out;
    }

    /** One compiled rule: a rule per family it can match and per port alternative, then its verdict. */
    public List<GenericRule> rule(CompiledRule r) {
        List<List<Match>> combos = new ArrayList<>();
        Set<IpFamily> specific = familySpecific(r) ? familiesOf(r) : null;
        if (specific == null) {
            combos.addAll(matches(r, null));
        } else {
            for (IpFamily f : IpFamily.values()) {
                if (specific.contains(f)) {
                    combos.addAll(matches(r, f));
                }
            }
        }
        List<GenericRule> out = new ArrayList<>();
        switch (r.action()) {
            case Allow, Pass -> {
                long bit = r.action() == Action.Allow ? marks.accept() : marks.pass();
                combos.forEach(m -> out.add(new GenericRule(m, new Target.SetMark(bit), null)));
                if (!combos.isEmpty()) {
                    out.add(GenericRule.of(Target.RETURN, new Match.MarkAllSet(bit)));
                }
            }
            case Deny -> combos.forEach(m -> out.add(new GenericRule(m, Target.DROP, null)));
            case Log -> combos.forEach(m -> out.add(new GenericRule(m, new Target.Log("calico-packet: "), null)));
        }
        return out;
    }

    /** Whether the rule only makes sense per family: it names addresses, sets, ICMP or an IP version. */
    private static boolean familySpecific(CompiledRule r) {
        return r.ipVersion() != null || r.icmp() != null || r.notIcmp() != null || isIcmp(r.protocol())
                || hasAddresses(r.source()) || hasAddresses(r.destination());
    }

    private static boolean hasAddresses(CompiledRule.Side s) {
        return !s.nets().isEmpty() || !s.notNets().isEmpty() || !s.ipSetIds().isEmpty() || !s.notIpSetIds().isEmpty()
                || !s.namedPortIpSetIds().isEmpty() || !s.notNamedPortIpSetIds().isEmpty();
    }

    private static boolean isIcmp(String protocol) {
        return protocol != null && (protocol.equalsIgnoreCase("icmp") || protocol.equalsIgnoreCase("icmpv6"));
    }

    /** The rendered families this family-specific rule can match. */
    private Set<IpFamily> familiesOf(CompiledRule r) {
        Set<IpFamily> out = EnumSet.noneOf(IpFamily.class);
        out.addAll(families);
        if (r.ipVersion() != null) {
            out.retainAll(Set.of(r.ipVersion() == 6 ? IpFamily.V6 : IpFamily.V4));
        }
        if (r.protocol() != null && r.protocol().equalsIgnoreCase("icmp")) {
            out.remove(IpFamily.V6);
        } else if (r.protocol() != null && r.protocol().equalsIgnoreCase("icmpv6")) {
            out.remove(IpFamily.V4);
        }
        for (CompiledRule.Side s : List.of(r.source(), r.destination())) {
            if (!s.nets().isEmpty()) {
                out.removeIf(f -> s.nets().stream().noneMatch(n -> IpFamily.of(n) == f));
            }
        }
        return out;
    }

    /** The match lists of one rule in one family ({@code null}: family-neutral), one per port alternative. */
    private List<List<Match>> matches(CompiledRule r, IpFamily f) {
        List<Match> common = new ArrayList<>();
        if (f != null) {
            common.add(new Match.Family(f));
        }
        if (r.protocol() != null) {
            common.add(new Match.Protocol(r.protocol().toLowerCase(Locale.ROOT), false));
        }
        if (r.notProtocol() != null) {
            common.add(new Match.Protocol(r.notProtocol().toLowerCase(Locale.ROOT), true));
        }
        if (r.icmp() != null && r.icmp().type() != null) {
            common.add(new Match.Icmp(f, r.icmp().type(), r.icmp().code(), false));
        }
        if (r.notIcmp() != null && r.notIcmp().type() != null) {
            common.add(new Match.Icmp(f, r.notIcmp().type(), r.notIcmp().code(), true));
        }
        side(r.source(), Dir.SRC, f, common);
        side(r.destination(), Dir.DST, f, common);
        List<List<Match>> combos = new ArrayList<>();
        for (List<Match> s : alternatives(r.source(), Dir.SRC, f)) {
            for (List<Match> d : alternatives(r.destination(), Dir.DST, f)) {
                List<Match> m = new ArrayList<>(common);
                m.addAll(s);
                m.addAll(d);
                combos.add(List.copyOf(m));
            }
        }
        return combos;
    }

    /** The ANDed matches of one side: nets, negated nets, set membership, negated ports. */
    private static void side(CompiledRule.Side side, Dir dir, IpFamily f, List<Match> out) {
        List<String> nets = inFamily(side.nets(), f);
        if (!nets.isEmpty()) {
            out.add(new Match.Nets(dir, nets, false));
        }
        List<String> notNets = inFamily(side.notNets(), f);
        if (!notNets.isEmpty()) {
            out.add(new Match.Nets(dir, notNets, true));
        }
        side.ipSetIds().forEach(id -> out.add(new Match.InSet(dir, f, id, false)));
        side.notIpSetIds().forEach(id -> out.add(new Match.InSet(dir, f, id, true)));
        if (!side.notPorts().isEmpty()) {
            out.add(new Match.Ports(dir, side.notPorts(), true));
        }
        side.notNamedPortIpSetIds().forEach(id -> out.add(new Match.NamedPortSet(dir, f, id, true)));
    }

    private static List<String> inFamily(List<String> nets, IpFamily f) {
        return f == null ? nets : nets.stream().filter(n -> IpFamily.of(n) == f).toList();
    }

    /** The ORed port matches of one side; one empty alternative when the side has none. */
    private static List<List<Match>> alternatives(CompiledRule.Side side, Dir dir, IpFamily f) {
        List<List<Match>> alts = new ArrayList<>();
        if (!side.ports().isEmpty()) {
            alts.add(List.of(new Match.Ports(dir, side.ports(), false)));
        }
        side.namedPortIpSetIds().forEach(id -> alts.add(List.of(new Match.NamedPortSet(dir, f, id, false))));
        if (alts.isEmpty()) {
            alts.add(List.of());
        }
        return alts;
    }
}
