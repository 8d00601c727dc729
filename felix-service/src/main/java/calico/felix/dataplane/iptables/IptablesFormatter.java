package calico.felix.dataplane.iptables;

import calico.dataplane.iptables.Rule;
import calico.felix.dataplane.rules.GenericChain;
import calico.felix.dataplane.rules.GenericRule;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.MarkBits;
import calico.felix.dataplane.rules.Match;
import calico.felix.dataplane.rules.Names;
import calico.felix.dataplane.rules.Target;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Formats generic rules as iptables arguments for one family's tables. Where iptables cannot say
 * something in one rule it uses more: a list of several nets becomes a driver-made IP set
 * ({@code -s} takes one net), and more than 15 ports become several rules (multiport's limit),
 * ORed for positive port matches and ANDed as several matches in one rule for negated ones.
 */
public final class IptablesFormatter {

    static final int MULTIPORT_MAX = 15;

    private final IpFamily family;

    public IptablesFormatter(IpFamily family) {
        this.family = family;
    }

    /** One chain as iptables rules; {@code netSets} collects the net sets the rules need (name -> members). */
    public Chain chain(GenericChain c, Map<String, Set<String>> netSets) {
        List<Rule> out = new ArrayList<>();
        if (c instanceof GenericChain.Rules r) {
            r.rules().forEach(rule -> out.addAll(rule(rule, netSets)));
        } else if (c instanceof GenericChain.Dispatch d) {
            String flag = d.in() ? "-i" : "-o";
            d.targets().forEach((iface, target) -> out.add(Rule.of(flag, iface, "-g", target)));
            if (d.fallback() != null) {
                out.add(new Rule(target(d.fallback())));
            }
        }
        return new Chain(c.name(), out);
    }

    /** One generic rule as one or more iptables rules with the same meaning. */
    public List<Rule> rule(GenericRule r, Map<String, Set<String>> netSets) {
        List<List<String>> variants = new ArrayList<>();
        variants.add(new ArrayList<>());
        Set<Match.Dir> addressed = java.util.EnumSet.noneOf(Match.Dir.class);
        for (Match m : r.matches()) {
            if (m instanceof Match.Ports p && !p.negated()) {
                List<List<String>> next = new ArrayList<>();
                for (List<String> chunk : portChunks(p.ports())) {
                    for (List<String> v : variants) {
                        List<String> w = new ArrayList<>(v);
                        w.addAll(List.of("-m", "multiport", p.dir() == Match.Dir.SRC ? "--source-ports"
                                : "--destination-ports", String.join(",", chunk)));
                        next.add(w);
                    }
                }
                variants = next;
            } else if (m instanceof Match.Nets n) {
                List<String> words = nets(n, netSets, !addressed.add(n.dir()));
                variants.forEach(v -> v.addAll(words));
            } else {
                List<String> words = match(m, netSets);
                variants.forEach(v -> v.addAll(words));
            }
        }
        List<String> target = target(r.target());
        List<Rule> out = new ArrayList<>();
        for (List<String> v : variants) {
            List<String> all = new ArrayList<>();
            if (r.comment() != null) {
                all.addAll(List.of("-m", "comment", "--comment", r.comment()));
            }
            all.addAll(v);
            all.addAll(target);
            out.add(new Rule(all));
        }
        return out;
    }

    private List<String> match(Match m, Map<String, Set<String>> netSets) {
        if (m instanceof Match.Family) {
            return List.of(); // implied by the table's family
        } else if (m instanceof Match.Interface i) {
            return List.of(i.in() ? "-i" : "-o", i.prefix() ? i.name() + "+" : i.name());
        } else if (m instanceof Match.Protocol p) {
            return negate(p.negated(), List.of("-p", protocol(p.name())));
        } else if (m instanceof Match.Icmp i) {
            String value = i.code() == null ? Integer.toString(i.type()) : i.type() + "/" + i.code();
            boolean v6 = i.family() == IpFamily.V6;
            List<String> w = new ArrayList<>(List.of("-m", v6 ? "icmp6" : "icmp"));
            if (i.negated()) {
                w.add("!");
            }
            w.addAll(List.of(v6 ? "--icmpv6-type" : "--icmp-type", value));
            return w;
        } else if (m instanceof Match.InSet s) {
            return set(s.negated(), Names.ipSet(family, s.setId()), dir(s.dir()));
        } else if (m instanceof Match.NamedPortSet s) {
            return set(s.negated(), Names.ipSet(family, s.setId()), dir(s.dir()) + "," + dir(s.dir()));
        } else if (m instanceof Match.Ports p) { // negated: every chunk must miss, so all in one rule
            List<String> w = new ArrayList<>();
            for (List<String> chunk : portChunks(p.ports())) {
                w.addAll(List.of("-m", "multiport", "!", p.dir() == Match.Dir.SRC ? "--source-ports"
                        : "--destination-ports", String.join(",", chunk)));
            }
            return w;
        } else if (m instanceof Match.MarkAllSet s) {
            return List.of("-m", "mark", "--mark", MarkBits.set(s.bits()));
        } else if (m instanceof Match.MarkAllClear c) {
            return List.of("-m", "mark", "--mark", MarkBits.clear(c.bits()));
        } else if (m instanceof Match.MarkEquals e) {
            return List.of("-m", "mark", "--mark", MarkBits.hex(e.value()) + "/" + MarkBits.hex(e.mask()));
        } else if (m instanceof Match.MarkAnySet a) {
            return List.of("-m", "mark", "!", "--mark", MarkBits.clear(a.bits()));
        } else if (m instanceof Match.Conntrack c) {
            return List.of("-m", "conntrack", "--ctstate",
                    c.states().stream().sorted().map(Enum::name).collect(Collectors.joining(",")));
        } else if (m instanceof Match.ConntrackDnat d) {
            return d.negated() ? List.of("-m", "conntrack", "!", "--ctstate", "DNAT")
                    : List.of("-m", "conntrack", "--ctstate", "DNAT");
        } else if (m instanceof Match.ReversePathFails) {
            return List.of("-m", "rpfilter", "--validmark", "--invert");
        } else if (m instanceof Match.DstLocal l) {
            return l.negated() ? List.of("-m", "addrtype", "!", "--dst-type", "LOCAL")
                    : List.of("-m", "addrtype", "--dst-type", "LOCAL");
        }
        throw new IllegalArgumentException("match: no iptables form for " + m);
    }

    /** {@code -s}/{@code -d} take one net and may appear once per rule; otherwise a net set. */
    private List<String> nets(Match.Nets n, Map<String, Set<String>> netSets, boolean flagTaken) {
        if (n.cidrs().size() == 1 && !flagTaken) {
            return negate(n.negated(), List.of(n.dir() == Match.Dir.SRC ? "-s" : "-d", n.cidrs().get(0)));
        }
        List<String> sorted = new ArrayList<>(new TreeSet<>(n.cidrs()));
        String name = Names.netsSet(family, sorted);
        netSets.put(name, new TreeSet<>(sorted));
        return set(n.negated(), name, dir(n.dir()));
    }

    private static List<String> set(boolean negated, String name, String dirs) {
        return negated ? List.of("-m", "set", "!", "--match-set", name, dirs)
                : List.of("-m", "set", "--match-set", name, dirs);
    }

    private static List<String> negate(boolean negated, List<String> words) {
        if (!negated) {
            return words;
        }
        List<String> w = new ArrayList<>();
        w.add("!");
        w.addAll(words);
        return w;
    }

    private static String dir(Match.Dir d) {
        return d == Match.Dir.SRC ? "src" : "dst";
    }

    static List<String> target(Target t) {
        if (t instanceof Target.Accept) {
            return List.of("-j", "ACCEPT");
        } else if (t instanceof Target.Drop) {
            return List.of("-j", "DROP");
        } else if (t instanceof Target.Return) {
            return List.of("-j", "RETURN");
        } else if (t instanceof Target.Jump j) {
            return List.of("-j", j.chain());
        } else if (t instanceof Target.Goto g) {
            return List.of("-g", g.chain());
        } else if (t instanceof Target.SetMark s) {
            return List.of("-j", "MARK", "--set-xmark", MarkBits.set(s.bits()));
        } else if (t instanceof Target.ClearMark c) {
            return List.of("-j", "MARK", "--set-xmark", MarkBits.clear(c.bits()));
        } else if (t instanceof Target.Log l) {
            return List.of("-j", "LOG", "--log-prefix", l.prefix(), "--log-level", "5");
        } else if (t instanceof Target.Nflog n) {
            // iptables-save's order, so a read-back compares equal
            return List.of("-j", "NFLOG", "--nflog-prefix", n.prefix(), "--nflog-group", Integer.toString(n.group()));
        } else if (t instanceof Target.Masquerade m) {
            List<String> out = new ArrayList<>(List.of("-j", "MASQUERADE"));
            if (m.hasPorts()) {
                out.addAll(List.of("--to-ports", m.minPort() + "-" + m.maxPort()));
            }
            if (m.fullyRandom()) {
                out.add("--random-fully"); // after --to-ports: iptables-save's order
            }
            return out;
        } else if (t instanceof Target.Dnat d) {
            return List.of("-j", "DNAT", "--to-destination", d.address());
        } else if (t instanceof Target.Snat s) {
            return List.of("-j", "SNAT", "--to-source", s.address());
        } else if (t instanceof Target.Reject) {
            return List.of("-j", "REJECT");
        } else if (t instanceof Target.NoTrack) {
            return List.of("-j", "NOTRACK");
        }
        throw new IllegalArgumentException("target: no iptables form for " + t);
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

    static String protocol(String p) {
        return p.equals("icmpv6") ? "ipv6-icmp" : p;
    }
}
