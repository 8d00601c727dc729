package calico.felix.dataplane.iptables;

import calico.api.model.Action;
import calico.dataplane.iptables.Rule;
import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.CompiledRule;
import calico.felix.calc.DataplaneUpdate.WorkloadEndpointUpdate;
import calico.felix.calc.PolicyId;
import calico.felix.calc.TierPolicies;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.MarkBits;
import calico.felix.dataplane.rules.Names;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Pure rendering of a {@link DataplaneModel} into the filter-table chains we own (IPv4), in
 * Calico's layout:
 *
 * <pre>
 * FORWARD -> cali-FORWARD -> (-i cali+) cali-from-wl-dispatch -> (-i if -g) cali-fw-&lt;if&gt;
 *                         -> (-o cali+) cali-to-wl-dispatch   -> (-o if -g) cali-tw-&lt;if&gt;
 *                         -> accept mark set: ACCEPT
 * cali-tw/fw-&lt;if&gt;: clear marks; ct established/related ACCEPT; ct invalid DROP;
 *   per enforced tier: clear pass; per policy: (pass clear) jump cali-pi/po-&lt;id&gt;, accept set: RETURN;
 *   end of tier: pass clear -> DROP (unless the tier's default is Pass);
 *   per profile: jump cali-pri/pro-&lt;name&gt;, accept set: RETURN; finally DROP.
 * </pre>
 *
 * A rule whose source or destination has several numeric-port groups or named-port sets
 * (alternatives) is expanded into one iptables rule per combination; several nets become a
 * driver-made IP set because {@code -s} takes one net.
 */
public final class ChainRenderer {

    /** Everything the model renders to: chains by name, and the net sets the rules need (name -> members). */
    public record Rendered(Map<String, Chain> chains, Map<String, Set<String>> netSets, Set<String> referencedSetIds) {
    }

    private static final int MULTIPORT_MAX = 15;

    private final MarkBits marks;
    private final String interfacePrefix;

    public ChainRenderer(MarkBits marks, String interfacePrefix) {
        this.marks = marks;
        this.interfacePrefix = interfacePrefix;
    }

    public static Rendered render(DataplaneModel model) {
        return new ChainRenderer(model.marks(), model.interfacePrefix()).renderAll(model);
    }

    Rendered renderAll(DataplaneModel model) {
        Map<String, Chain> chains = new TreeMap<>();
        Map<String, Set<String>> netSets = new TreeMap<>();
        Set<String> refs = new TreeSet<>();
        add(chains, forwardChain());
        List<WorkloadEndpointUpdate> weps = model.workloads().values().stream()
                .filter(w -> w.interfaceName() != null && !w.interfaceName().isBlank())
                .sorted(Comparator.comparing(WorkloadEndpointUpdate::interfaceName)).toList();
        add(chains, fromWorkloadDispatch(weps));
        add(chains, toWorkloadDispatch(weps));
        for (WorkloadEndpointUpdate w : weps) {
            add(chains, endpointChain(Names.toWorkload(w.interfaceName()), w.ingress(), w.profileIds(), true,
                    model.policies().keySet()));
            add(chains, endpointChain(Names.fromWorkload(w.interfaceName()), w.egress(), w.profileIds(), false,
                    model.policies().keySet()));
        }
        model.policies().forEach((id, p) -> {
            if (!id.staged()) {
                add(chains, new Chain(Names.policyInbound(id), rules(p.inbound(), netSets)));
                add(chains, new Chain(Names.policyOutbound(id), rules(p.outbound(), netSets)));
                p.ipSetIds().forEach(refs::add);
            }
        });
        model.profiles().forEach((name, p) -> {
            add(chains, new Chain(Names.profileInbound(name), rules(p.inbound(), netSets)));
            add(chains, new Chain(Names.profileOutbound(name), rules(p.outbound(), netSets)));
            p.ipSetIds().forEach(refs::add);
        });
        return new Rendered(chains, netSets, refs);
    }

    private static void add(Map<String, Chain> chains, Chain c) {
        if (chains.put(c.name(), c) != null) {
            throw new IllegalStateException("two chains render to the name " + c.name());
        }
    }

    Chain forwardChain() {
        String wild = interfacePrefix + "+";
        return new Chain(Names.FORWARD, List.of(
                Rule.of("-j", "MARK", "--set-xmark", MarkBits.clear(marks.both())),
                Rule.of("-i", wild, "-j", Names.FROM_WL_DISPATCH),
                Rule.of("-o", wild, "-j", Names.TO_WL_DISPATCH),
                Rule.of("-m", "mark", "--mark", MarkBits.set(marks.accept()), "-j", "ACCEPT")));
    }

    Chain fromWorkloadDispatch(Collection<WorkloadEndpointUpdate> weps) {
        List<Rule> rules = new ArrayList<>();
        weps.forEach(w -> rules.add(Rule.of("-i", w.interfaceName(), "-g", Names.fromWorkload(w.interfaceName()))));
        rules.add(Rule.of("-j", "DROP")); // unknown workload interface
        return new Chain(Names.FROM_WL_DISPATCH, rules);
    }

    Chain toWorkloadDispatch(Collection<WorkloadEndpointUpdate> weps) {
        List<Rule> rules = new ArrayList<>();
        weps.forEach(w -> rules.add(Rule.of("-o", w.interfaceName(), "-g", Names.toWorkload(w.interfaceName()))));
        rules.add(Rule.of("-j", "DROP"));
        return new Chain(Names.TO_WL_DISPATCH, rules);
    }

    /**
     * One direction of an endpoint.
     *
     * @param inbound  towards the workload (its ingress): policies' and profiles' inbound chains
     * @param existing policies the model holds; a listed policy missing from it fails closed (DROP)
     */
    Chain endpointChain(String name, List<TierPolicies> tiers, List<String> profiles, boolean inbound,
                        Set<PolicyId> existing) {
        String acceptSet = MarkBits.set(marks.accept());
        String passClear = MarkBits.clear(marks.pass());
        List<Rule> rules = new ArrayList<>();
        rules.add(Rule.of("-j", "MARK", "--set-xmark", MarkBits.clear(marks.both())));
        rules.add(Rule.of("-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED", "-j", "ACCEPT"));
        rules.add(Rule.of("-m", "conntrack", "--ctstate", "INVALID", "-j", "DROP"));
        for (TierPolicies tier : tiers) {
            if (!tier.enforced()) {
                continue;
            }
            rules.add(Rule.of("-j", "MARK", "--set-xmark", passClear));
            for (PolicyId p : tier.policies()) {
                if (p.staged()) {
                    continue;
                }
                if (!existing.contains(p)) {
                    rules.add(Rule.of("-m", "mark", "--mark", passClear, "-j", "DROP"));
                    continue;
                }
                String target = inbound ? Names.policyInbound(p) : Names.policyOutbound(p);
                rules.add(Rule.of("-m", "mark", "--mark", passClear, "-j", target));
                rules.add(Rule.of("-m", "mark", "--mark", acceptSet, "-j", "RETURN"));
            }
            Action def = tier.missing() || tier.defaultAction() == null ? Action.Deny : tier.defaultAction();
            if (def != Action.Pass) {
                rules.add(Rule.of("-m", "mark", "--mark", passClear, "-j", "DROP")); // end of tier
            }
        }
        for (String profile : profiles) {
            rules.add(Rule.of("-j", inbound ? Names.profileInbound(profile) : Names.profileOutbound(profile)));
            rules.add(Rule.of("-m", "mark", "--mark", acceptSet, "-j", "RETURN"));
        }
        rules.add(Rule.of("-j", "DROP")); // no profile matched
        return new Chain(name, rules);
    }

    /** Renders a policy's or profile's rules for one direction, in order. */
    List<Rule> rules(List<CompiledRule> compiled, Map<String, Set<String>> netSets) {
        List<Rule> out = new ArrayList<>();
        compiled.forEach(r -> out.addAll(rule(r, netSets)));
        return out;
    }

    /** One compiled rule as iptables rules (none for IPv6-only rules). */
    List<Rule> rule(CompiledRule r, Map<String, Set<String>> netSets) {
        if (r.ipVersion() != null && r.ipVersion() == 6) {
            return List.of();
        }
        List<String> common = new ArrayList<>();
        if (r.protocol() != null) {
            common.addAll(List.of("-p", protocol(r.protocol())));
        }
        if (r.notProtocol() != null) {
            common.addAll(List.of("!", "-p", protocol(r.notProtocol())));
        }
        if (r.icmp() != null && r.icmp().type() != null) {
            common.addAll(List.of("-m", "icmp", "--icmp-type", icmp(r.icmp())));
        }
        if (r.notIcmp() != null && r.notIcmp().type() != null) {
            common.addAll(List.of("-m", "icmp", "!", "--icmp-type", icmp(r.notIcmp())));
        }
        side(r.source(), true, common, netSets);
        side(r.destination(), false, common, netSets);
        List<List<String>> combos = new ArrayList<>();
        for (List<String> s : alternatives(r.source(), true)) {
            for (List<String> d : alternatives(r.destination(), false)) {
                List<String> m = new ArrayList<>(common);
                m.addAll(s);
                m.addAll(d);
                combos.add(m);
            }
        }
        List<Rule> out = new ArrayList<>();
        if (r.action() == Action.Allow || r.action() == Action.Pass) {
            long bit = r.action() == Action.Allow ? marks.accept() : marks.pass();
            combos.forEach(m -> out.add(rule(m, "-j", "MARK", "--set-xmark", MarkBits.set(bit))));
            out.add(Rule.of("-m", "mark", "--mark", MarkBits.set(bit), "-j", "RETURN"));
        } else if (r.action() == Action.Deny) {
            combos.forEach(m -> out.add(rule(m, "-j", "DROP")));
        } else {
            combos.forEach(m -> out.add(rule(m, "-j", "LOG", "--log-prefix", "calico-packet: ", "--log-level", "5")));
        }
        return out;
    }

    private static Rule rule(List<String> match, String... target) {
        List<String> all = new ArrayList<>(match);
        all.addAll(List.of(target));
        return new Rule(all);
    }

    /** The ANDed matches of one side: nets, negated nets, set membership, negated ports. */
    private void side(CompiledRule.Side side, boolean src, List<String> out, Map<String, Set<String>> netSets) {
        String flag = src ? "-s" : "-d";
        String dir = src ? "src" : "dst";
        if (side.nets().size() == 1) {
            out.addAll(List.of(flag, side.nets().get(0)));
        } else if (side.nets().size() > 1) {
            out.addAll(List.of("-m", "set", "--match-set", netSet(side.nets(), netSets), dir));
        }
        if (side.notNets().size() == 1 && side.nets().size() != 1) {
            out.addAll(List.of("!", flag, side.notNets().get(0)));
        } else if (!side.notNets().isEmpty()) {
            out.addAll(List.of("-m", "set", "!", "--match-set", netSet(side.notNets(), netSets), dir));
        }
        for (String id : side.ipSetIds()) {
            out.addAll(List.of("-m", "set", "--match-set", Names.ipSetV4(id), dir));
        }
        for (String id : side.notIpSetIds()) {
            out.addAll(List.of("-m", "set", "!", "--match-set", Names.ipSetV4(id), dir));
        }
        for (List<String> chunk : portChunks(side.notPorts())) {
            out.addAll(List.of("-m", "multiport", "!", src ? "--source-ports" : "--destination-ports",
                    String.join(",", chunk)));
        }
        for (String id : side.notNamedPortIpSetIds()) {
            out.addAll(List.of("-m", "set", "!", "--match-set", Names.ipSetV4(id), dir + "," + dir));
        }
    }

    /** The ORed port matches of one side; one empty alternative when the side has none. */
    private List<List<String>> alternatives(CompiledRule.Side side, boolean src) {
        String dir = src ? "src" : "dst";
        List<List<String>> alts = new ArrayList<>();
        for (List<String> chunk : portChunks(side.ports())) {
            alts.add(List.of("-m", "multiport", src ? "--source-ports" : "--destination-ports", String.join(",", chunk)));
        }
        for (String id : side.namedPortIpSetIds()) {
            alts.add(List.of("-m", "set", "--match-set", Names.ipSetV4(id), dir + "," + dir));
        }
        if (alts.isEmpty()) {
            alts.add(List.of());
        }
        return alts;
    }

    /** multiport takes at most 15 ports, a range counting as two. */
    static List<List<String>> portChunks(List<String> ports) {
        List<List<String>> chunks = new ArrayList<>();
        List<String> cur = new ArrayList<>();
        int used = 0;
        for (String p : ports) {
            int cost = p.contains(":") ? 2 : 1;
            if (used + cost > MULTIPORT_MAX) {
                chunks.add(cur);
                cur = new ArrayList<>();
                used = 0;
            }
            cur.add(p);
            used += cost;
        }
        if (!cur.isEmpty()) {
            chunks.add(cur);
        }
        return chunks;
    }

    private static String netSet(List<String> nets, Map<String, Set<String>> netSets) {
        List<String> sorted = new ArrayList<>(new TreeSet<>(nets));
        String name = Names.netsSetV4(sorted);
        netSets.put(name, new TreeSet<>(sorted));
        return name;
    }

    static String protocol(String p) {
        String l = p.toLowerCase(Locale.ROOT);
        return l.equals("icmpv6") ? "ipv6-icmp" : l;
    }

    private static String icmp(calico.api.model.Rule.IcmpFields f) {
        return f.code() == null ? f.type().toString() : f.type() + "/" + f.code();
    }
}
