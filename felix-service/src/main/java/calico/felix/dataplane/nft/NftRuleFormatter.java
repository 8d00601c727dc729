package calico.felix.dataplane.nft;

import calico.api.net.Cidr;
import calico.dataplane.nft.NftBatch;
import calico.dataplane.nft.NftElem;
import calico.dataplane.nft.NftExpr;
import calico.felix.dataplane.rules.GenericChain;
import calico.felix.dataplane.rules.GenericRule;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.Match;
import calico.felix.dataplane.rules.Ruleset;
import calico.felix.dataplane.rules.Target;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Pure translation of the backend-neutral rule model into libnftables JSON for chains of our
 * {@code inet} table: one {@link GenericRule} becomes one nft rule (nft can say in one rule
 * everything iptables needs several for: port lists, several nets, negated ICMP type/code), a
 * {@link GenericChain.Dispatch} becomes one verdict-map lookup so endpoint churn only edits map
 * elements. Chain references are mapped to kernel names with {@link NftNames#chain}, set IDs with
 * {@link NftNames#set}.
 */
public final class NftRuleFormatter {

    /** nft keeps rule comments in 128 bytes of user data. */
    public static final int MAX_COMMENT_BYTES = 128;

    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    private static final Map<String, Integer> PROTOCOLS = Map.of("icmp", 1, "tcp", 6, "udp", 17, "gre", 47,
            "esp", 50, "ah", 51, "ipv6-icmp", 58, "icmpv6", 58, "sctp", 132, "udplite", 136);

    /**
     * One nft rule: its statements serialised once ({@code text}, what batches carry), its comment
     * ({@code null}: none) and what it names ({@code refers}). The statements' JSON tree is not kept: at
     * the policy scale (16,000 distinct rules) the trees held ~200 MiB of heap, the text a tenth of it;
     * {@link #expr()} parses the text again for the rare reader of the tree. Equal rules have equal text,
     * so equality compares the text: one string comparison instead of a walk of two trees per rule.
     */
    public record NftRule(NftBatch.Exprs text, String comment, Refers refers) {
        private static final ObjectMapper MAPPER = new ObjectMapper();

        public NftRule {
            Objects.requireNonNull(text, "text");
            Objects.requireNonNull(refers, "refers");
        }

        public NftRule(List<ObjectNode> expr, String comment) {
            this(NftBatch.Exprs.of(expr), comment, Refers.of(expr));
        }

        /** {@return the statements, parsed from {@link #text}} (a new tree each call) */
        public List<ObjectNode> expr() {
            try {
                List<ObjectNode> out = new ArrayList<>();
                MAPPER.readTree(text.json()).forEach(e -> out.add((ObjectNode) e));
                return out;
            } catch (JsonProcessingException e) {
                throw new IllegalStateException("a rule's own serialisation does not parse: " + text.json(), e);
            }
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof NftRule r && text.equals(r.text) && Objects.equals(comment, r.comment);
        }

        @Override
        public int hashCode() {
            return text.hashCode() * 31 + Objects.hashCode(comment);
        }
    }

    /**
     * What a rule names: sets and maps ({@code "@name"} strings, without the {@code @}) and chains (the
     * targets of {@code jump} and {@code goto}), found once when the rule is formatted.
     */
    public record Refers(List<String> sets, List<String> chains) {
        private static final List<String> VERDICTS_WITH_TARGET = List.of("jump", "goto");
        static final Refers NONE = new Refers(List.of(), List.of());

        public Refers {
            sets = List.copyOf(sets);
            chains = List.copyOf(chains);
        }

        static Refers of(List<? extends JsonNode> expr) {
            List<String> sets = new ArrayList<>();
            List<String> chains = new ArrayList<>();
            expr.forEach(e -> collect(e, sets, chains));
            return sets.isEmpty() && chains.isEmpty() ? NONE : new Refers(sets, chains);
        }

        private static void collect(JsonNode n, List<String> sets, List<String> chains) {
            if (n.isTextual()) {
                String s = n.textValue();
                if (s.startsWith("@")) {
                    sets.add(s.substring(1));
                }
                return;
            }
            if (n.isObject()) {
                for (String verdict : VERDICTS_WITH_TARGET) {
                    JsonNode v = n.get(verdict);
                    if (v != null && v.has("target")) {
                        chains.add(v.get("target").textValue());
                    }
                }
            }
            for (JsonNode child : n) {
                collect(child, sets, chains);
            }
        }
    }

    /** A per-interface verdict map: interface name -> {@code goto} kernel chain. */
    public record DispatchMap(String name, SortedMap<String, String> targets) {
        public DispatchMap {
            Objects.requireNonNull(name, "name");
            targets = Collections.unmodifiableSortedMap(new TreeMap<>(targets));
        }
    }

    /** A regular chain as the kernel gets it; {@code map} is set for dispatch chains. */
    public record NftChain(String name, List<NftRule> rules, DispatchMap map) {
        public NftChain {
            rules = List.copyOf(rules);
        }
    }

    private NftRuleFormatter() {
    }

    /** {@return {@code chain} of {@code table}, named and formatted for our inet table} */
    public static NftChain chain(Ruleset.Table table, GenericChain chain) {
        return chain(table, chain, NftRuleFormatter::rule);
    }

    /**
     * {@return {@code chain} of {@code table}, named and formatted for our inet table}, its rules
     * formatted by {@code format} (which must give what {@link #rule} gives: a cache of it)
     */
    public static NftChain chain(Ruleset.Table table, GenericChain chain,
                                 java.util.function.BiFunction<Ruleset.Table, GenericRule, NftRule> format) {
        String name = NftNames.chain(table, chain.name());
        if (chain instanceof GenericChain.Rules r) {
            List<NftRule> formatted = new ArrayList<>(r.rules().size());
            for (GenericRule g : r.rules()) {
                formatted.add(format.apply(table, g));
            }
            return new NftChain(name, formatted, null);
        }
        GenericChain.Dispatch d = (GenericChain.Dispatch) chain;
        String map = NftNames.dispatchMap(name);
        SortedMap<String, String> targets = new TreeMap<>();
        d.targets().forEach((iface, target) -> {
            // A name no kernel interface can have (IFNAMSIZ) gets no entry: its packets cannot
            // exist, and one bad endpoint must not make every batch fail.
            if (iface != null && !iface.isEmpty() && iface.length() <= 15 && iface.indexOf('/') < 0) {
                targets.put(iface, NftNames.chain(table, target));
            }
        });
        List<NftRule> rules = new ArrayList<>();
        rules.add(new NftRule(List.of(NftExpr.vmap(NftExpr.meta(d.in() ? "iifname" : "oifname"), map)),
                null));
        if (d.fallback() != null) {
            rules.add(new NftRule(List.of(target(table, d.fallback())), null));
        }
        return new NftChain(name, rules, new DispatchMap(map, targets));
    }

    /** {@return one generic rule as an nft rule of a chain of {@code table}} */
    public static NftRule rule(Ruleset.Table table, GenericRule rule) {
        return rule(table, rule, NftNames::set);
    }

    /** As {@link #rule(Ruleset.Table, GenericRule)}, set names from {@code setName} (family, graph ID → kernel name). */
    static NftRule rule(Ruleset.Table table, GenericRule rule,
                        java.util.function.BiFunction<IpFamily, String, String> setName) {
        java.util.Set<IpFamily> families = java.util.EnumSet.noneOf(IpFamily.class);
        rule.matches().forEach(m -> family(m).ifPresent(families::add));
        if (families.size() > 1) {
            // nft would say only "conflicting protocols specified: ip vs. ip6"
            throw new IllegalArgumentException("rule: matches need both IPv4 and IPv6 packets, so it can never match: "
                    + rule);
        }
        List<ObjectNode> expr = new ArrayList<>();
        for (Match m : rule.matches()) {
            expr.addAll(match(m, setName));
        }
        expr.add(target(table, rule.target()));
        return new NftRule(expr, comment(rule.comment()));
    }

    /** {@return the statements for one match} (ICMP type with code takes two) */
    public static List<ObjectNode> match(Match m) {
        return match(m, NftNames::set);
    }

    private static List<ObjectNode> match(Match m, java.util.function.BiFunction<IpFamily, String, String> setName) {
        if (m instanceof Match.Family f) {
            return List.of(NftExpr.match("==", NftExpr.meta("nfproto"),
                    JSON.textNode(f.family() == IpFamily.V4 ? "ipv4" : "ipv6")));
        } else if (m instanceof Match.Interface i) {
            String name = i.prefix() ? i.name() + "*" : i.name();
            return List.of(NftExpr.match("==", NftExpr.meta(i.in() ? "iifname" : "oifname"), JSON.textNode(name)));
        } else if (m instanceof Match.Protocol p) {
            return List.of(NftExpr.match(op(p.negated()), NftExpr.meta("l4proto"), protocol(p.name())));
        } else if (m instanceof Match.Icmp i) {
            return icmp(i);
        } else if (m instanceof Match.Nets n) {
            return List.of(nets(n));
        } else if (m instanceof Match.InSet s) {
            return List.of(NftExpr.match(op(s.negated()), addr(s.family(), s.dir()),
                    NftExpr.setRef(setName.apply(s.family(), s.setId()))));
        } else if (m instanceof Match.NamedPortSet s) {
            // Calico's named-port sets hold (address, protocol, port) of the side they match.
            ObjectNode key = NftExpr.concat(addr(s.family(), s.dir()), NftExpr.meta("l4proto"),
                    NftExpr.payload("th", s.dir() == Match.Dir.SRC ? "sport" : "dport"));
            return List.of(NftExpr.match(op(s.negated()), key, NftExpr.setRef(setName.apply(s.family(), s.setId()))));
        } else if (m instanceof Match.Ports p) {
            return List.of(ports(p));
        } else if (m instanceof Match.MarkAllSet s) {
            return List.of(NftExpr.markMatches(s.bits(), s.bits()));
        } else if (m instanceof Match.MarkAllClear c) {
            return List.of(NftExpr.markMatches(c.bits(), 0));
        } else if (m instanceof Match.MarkEquals e) {
            return List.of(NftExpr.markMatches(e.mask(), e.value()));
        } else if (m instanceof Match.MarkAnySet a) {
            return List.of(NftExpr.markAnySet(a.bits()));
        } else if (m instanceof Match.Conntrack c) {
            if (c.states().isEmpty()) {
                throw new IllegalArgumentException("Conntrack: at least one state is required");
            }
            return List.of(NftExpr.ctState(c.states().stream().map(s -> s.name().toLowerCase(Locale.ROOT))
                    .sorted().toArray(String[]::new)));
        } else if (m instanceof Match.ConntrackDnat d) {
            ObjectNode ct = JSON.objectNode();
            ct.putObject("ct").put("key", "status");
            // a flag test: "in" (ct status dnat) and "!" (ct status ! dnat); "=="/"!=" compare every bit
            return List.of(NftExpr.match(d.negated() ? "!" : "in", ct, JSON.textNode("dnat")));
        } else if (m instanceof Match.ReversePathFails) {
            // fib saddr . mark . iif oif missing: no route back out of the incoming interface
            ObjectNode fib = JSON.objectNode();
            fib.putObject("fib").put("result", "oif").putArray("flags").add("saddr").add("mark").add("iif");
            return List.of(NftExpr.match("==", fib, JSON.booleanNode(false)));
        } else if (m instanceof Match.DstLocal d) {
            ObjectNode fib = JSON.objectNode();
            fib.putObject("fib").put("result", "type").putArray("flags").add("daddr");
            return List.of(NftExpr.match(op(d.negated()), fib, JSON.textNode("local")));
        }
        throw new IllegalArgumentException("match: unsupported variant " + m);
    }

    /** {@return the family a match implies}, if any */
    static java.util.Optional<IpFamily> family(Match m) {
        if (m instanceof Match.Family f) {
            return java.util.Optional.of(f.family());
        } else if (m instanceof Match.Icmp i) {
            return java.util.Optional.of(i.family());
        } else if (m instanceof Match.InSet s) {
            return java.util.Optional.of(s.family());
        } else if (m instanceof Match.NamedPortSet s) {
            return java.util.Optional.of(s.family());
        } else if (m instanceof Match.Nets n) {
            return java.util.Optional.of(IpFamily.of(n.cidrs().get(0)));
        }
        return java.util.Optional.empty();
    }

    /** {@return the statement (verdict or action) for a target, naming chains of {@code table}} */
    public static ObjectNode target(Ruleset.Table table, Target t) {
        if (t instanceof Target.Accept) {
            return NftExpr.accept();
        } else if (t instanceof Target.Drop) {
            return NftExpr.drop();
        } else if (t instanceof Target.Return) {
            return NftExpr.returnVerdict();
        } else if (t instanceof Target.Jump j) {
            return NftExpr.jump(NftNames.chain(table, j.chain()));
        } else if (t instanceof Target.Goto g) {
            return NftExpr.goTo(NftNames.chain(table, g.chain()));
        } else if (t instanceof Target.SetMark s) {
            return NftExpr.setMarkBits(s.bits());
        } else if (t instanceof Target.ClearMark c) {
            return NftExpr.clearMarkBits(c.bits());
        } else if (t instanceof Target.Log l) {
            ObjectNode n = NftExpr.log(l.prefix() == null ? "calico-packet: " : l.prefix(), null);
            ((ObjectNode) n.get("log")).put("level", "notice"); // iptables' --log-level 5
            return n;
        } else if (t instanceof Target.Nflog n) {
            return NftExpr.log(n.prefix(), n.group());
        } else if (t instanceof Target.Masquerade m) {
            if (!m.hasPorts() && !m.fullyRandom()) {
                return JSON.objectNode().set("masquerade", NullNode.instance);
            }
            // nft -j list's form, so a read-back compares equal: one port as a number, flags as a string
            ObjectNode masq = JSON.objectNode();
            if (m.hasPorts()) {
                if (m.minPort() == m.maxPort()) {
                    masq.put("port", m.minPort());
                } else {
                    masq.set("port", JSON.objectNode().set("range", JSON.arrayNode().add(m.minPort()).add(m.maxPort())));
                }
            }
            if (m.fullyRandom()) {
                masq.put("flags", "fully-random");
            }
            return JSON.objectNode().set("masquerade", masq);
        } else if (t instanceof Target.Dnat d) {
            return nat("dnat", d.address());
        } else if (t instanceof Target.Snat s) {
            return nat("snat", s.address());
        } else if (t instanceof Target.Reject) {
            return JSON.objectNode().set("reject", NullNode.instance);
        } else if (t instanceof Target.NoTrack) {
            return JSON.objectNode().set("notrack", NullNode.instance);
        }
        throw new IllegalArgumentException("target: unsupported variant " + t);
    }

    /** {@code dnat/snat ip|ip6 to <address>}: the inet table needs the family (nft -j list's form). */
    private static ObjectNode nat(String kind, String address) {
        ObjectNode n = JSON.objectNode();
        n.put("family", address.contains(":") ? "ip6" : "ip");
        n.put("addr", address);
        return JSON.objectNode().set(kind, n);
    }

    /** {@return {@code c} cut to at most {@link #MAX_COMMENT_BYTES} UTF-8 bytes, never mid-character} */
    public static String comment(String c) {
        if (c == null || c.getBytes(StandardCharsets.UTF_8).length <= MAX_COMMENT_BYTES) {
            return c;
        }
        int end = c.length();
        while (c.substring(0, end).getBytes(StandardCharsets.UTF_8).length > MAX_COMMENT_BYTES) {
            end = Character.isLowSurrogate(c.charAt(end - 1)) && end >= 2 ? end - 2 : end - 1;
        }
        return c.substring(0, end);
    }

    /** {@return a protocol for {@code meta l4proto}}: by number, so no {@code /etc/protocols} lookup can fail */
    static JsonNode protocol(String name) {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("Protocol: name is required");
        }
        String l = name.strip().toLowerCase(Locale.ROOT);
        Integer n = PROTOCOLS.get(l);
        if (n != null) {
            return JSON.numberNode(n);
        }
        try {
            int v = Integer.parseInt(l);
            if (v < 0 || v > 255) {
                throw new IllegalArgumentException("Protocol: number must be 0..255, was " + name);
            }
            return JSON.numberNode(v);
        } catch (NumberFormatException e) {
            if (!l.matches("[a-z][a-z0-9-]*")) {
                throw new IllegalArgumentException("Protocol: not a protocol name or number: " + name);
            }
            return JSON.textNode(l);
        }
    }

    private static List<ObjectNode> icmp(Match.Icmp i) {
        String proto = i.family() == IpFamily.V4 ? "icmp" : "icmpv6";
        checkByte("Icmp type", i.type());
        ObjectNode type = NftExpr.payload(proto, "type");
        if (i.code() == null) {
            return List.of(NftExpr.match(op(i.negated()), type, JSON.numberNode(i.type())));
        }
        checkByte("Icmp code", i.code());
        ObjectNode code = NftExpr.payload(proto, "code");
        if (!i.negated()) {
            return List.of(NftExpr.match("==", type, JSON.numberNode(i.type())),
                    NftExpr.match("==", code, JSON.numberNode(i.code())));
        }
        // not (type and code): one lookup of the pair (nft takes concatenations only against sets)
        ObjectNode pair = JSON.objectNode();
        pair.putArray("concat").add(i.type()).add(i.code());
        ObjectNode set = JSON.objectNode();
        set.putArray("set").add(pair);
        return List.of(NftExpr.match("!=", NftExpr.concat(type, code), set));
    }

    private static ObjectNode nets(Match.Nets n) {
        List<Cidr> cidrs = new ArrayList<>();
        for (String s : n.cidrs()) {
            Cidr c = Cidr.tryParseCidrOrIp(s).orElseThrow(
                    () -> new IllegalArgumentException("Nets: not a CIDR or address: " + s));
            cidrs.add(c.network());
        }
        int version = cidrs.get(0).version();
        if (cidrs.stream().anyMatch(c -> c.version() != version)) {
            throw new IllegalArgumentException("Nets: CIDRs of both families in one match: " + n.cidrs());
        }
        IpFamily family = version == 4 ? IpFamily.V4 : IpFamily.V6;
        List<Cidr> kept = withoutContained(cidrs);
        JsonNode right;
        if (kept.size() == 1) {
            right = element(kept.get(0));
        } else {
            ObjectNode set = JSON.objectNode();
            ArrayNode a = set.putArray("set");
            kept.forEach(c -> a.add(element(c)));
            right = set;
        }
        return NftExpr.match(op(n.negated()), addr(family, n.dir()), right);
    }

    /**
     * Drops nets inside other nets and sorts: an anonymous interval set rejects overlapping
     * elements, and the match means the same either way.
     */
    static List<Cidr> withoutContained(List<Cidr> cidrs) {
        // Nets are nested or disjoint. By network address, the widest first: a net inside another comes
        // after it with only nets inside it between, so the last net kept is the only one to test
        // (one pass: a set of 2,000 members took 4 million tests pairwise).
        List<Cidr> sorted = new ArrayList<>(cidrs);
        sorted.sort(Comparator.comparing((Cidr c) -> c.network().address()).thenComparingInt(Cidr::prefixLength)
                .thenComparing(Cidr::address));
        List<Cidr> kept = new ArrayList<>();
        for (Cidr c : sorted) {
            if (kept.isEmpty() || !kept.get(kept.size() - 1).contains(c)) {
                kept.add(c);
            }
        }
        return kept;
    }

    /** {@return a CIDR as nft lists it back}: a full-length prefix is a bare address */
    static JsonNode element(Cidr c) {
        return NftElem.cidr(c.toString());
    }

    private static ObjectNode ports(Match.Ports p) {
        if (p.ports().isEmpty()) {
            throw new IllegalArgumentException("Ports: at least one port or range is required");
        }
        List<int[]> ranges = new ArrayList<>();
        for (String s : p.ports()) {
            ranges.add(parsePort(s));
        }
        ranges.sort(Comparator.comparingInt((int[] r) -> r[0]).thenComparingInt(r -> r[1]));
        List<int[]> merged = new ArrayList<>();
        for (int[] r : ranges) {
            int[] last = merged.isEmpty() ? null : merged.get(merged.size() - 1);
            if (last != null && r[0] <= last[1] + 1) {
                last[1] = Math.max(last[1], r[1]);
            } else {
                merged.add(new int[] {r[0], r[1]});
            }
        }
        JsonNode right;
        if (merged.size() == 1) {
            right = port(merged.get(0));
        } else {
            ObjectNode set = JSON.objectNode();
            ArrayNode a = set.putArray("set");
            merged.forEach(r -> a.add(port(r)));
            right = set;
        }
        return NftExpr.match(op(p.negated()), NftExpr.payload("th", p.dir() == Match.Dir.SRC ? "sport" : "dport"),
                right);
    }

    private static JsonNode port(int[] r) {
        if (r[0] == r[1]) {
            return JSON.numberNode(r[0]);
        }
        ObjectNode n = JSON.objectNode();
        n.putArray("range").add(r[0]).add(r[1]);
        return n;
    }

    /** {@code "80"} or {@code "1000:2000"}. */
    static int[] parsePort(String s) {
        try {
            int colon = s.indexOf(':');
            int first = Integer.parseInt(colon < 0 ? s.strip() : s.substring(0, colon).strip());
            int last = colon < 0 ? first : Integer.parseInt(s.substring(colon + 1).strip());
            if (first < 0 || last > 65535 || first > last) {
                throw new IllegalArgumentException("Ports: need 0 <= first <= last <= 65535, was " + s);
            }
            return new int[] {first, last};
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("Ports: not a port or range first:last: " + s);
        }
    }

    private static ObjectNode addr(IpFamily family, Match.Dir dir) {
        return NftExpr.payload(family == IpFamily.V4 ? "ip" : "ip6", dir == Match.Dir.SRC ? "saddr" : "daddr");
    }

    private static String op(boolean negated) {
        return negated ? "!=" : "==";
    }

    private static void checkByte(String field, int v) {
        if (v < 0 || v > 255) {
            throw new IllegalArgumentException(field + ": must be 0..255, was " + v);
        }
    }
}
